package redact

import (
	"strings"
	"testing"
)

// tk builds a token fixture: prefix (split by the caller so that this file
// does not trip secret scanners) + n bytes cycling through alphabet.
func tk(prefix, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[(i*7+3)%len(alphabet)]
	}
	return prefix + string(b)
}

const (
	abAlnum = "aB3dE5fG7hJ9kLmNpQrStUvWxYz0"
	abHex   = "0123456789abcdef"
	abUpDig = "ABCDEFGHJKLMNPQRSTUVWXYZ2345"
	abLower = "abcdefghijklmnopqrstuvwxyz"
)

// TestRedactRules: one true positive (the token replaced whole, or the
// value only) and the near misses (left alone) for each rule, gitleaks'
// prefixes included.
func TestRedactRules(t *testing.T) {
	r := Default()
	type tc struct{ rule, in, want string }
	var tests []tc
	// Whole-token rules: "x <token> y" → "x ***REDACTED*** y".
	for _, tok := range []struct{ rule, token string }{
		{"hugging face", tk("hf"+"_", abLower, 34)},
		{"hugging face org", tk("api"+"_org_", abLower, 34)},
		{"gitlab pat", tk("gl"+"pat-", abAlnum+"_-", 20)},
		{"gitlab pat routable", tk("gl"+"pat-", abAlnum, 27) + ".01" + "abcdefg"},
		{"gitlab deploy", tk("gl"+"dt-", abAlnum, 20)},
		{"gitlab runner", tk("gl"+"rt-", abAlnum, 20)},
		{"gitlab ptt", tk("gl"+"ptt-", abHex, 40)},
		{"gitlab feed", tk("gl"+"ft-", abAlnum, 20)},
		{"gitlab cicd job", tk("gl"+"cbt-", abAlnum, 25)},
		{"gitlab registration", tk("GR13"+"48941", abAlnum, 20)},
		{"sendgrid", tk("S"+"G.", abAlnum, 22) + "." + tk("", abAlnum+"-_", 43)},
		{"google oauth", tk("ya"+"29.", abAlnum+"-_", 100)},
		{"twilio api key", tk("S"+"K", abHex, 32)},
		{"digitalocean", tk("do"+"p_v1_", abHex, 64)},
		{"shopify", tk("sh"+"pat_", abHex, 32)},
		{"grafana cloud", tk("gl"+"c_", abAlnum+"+/", 40) + "=="},
		{"linear", tk("lin"+"_api_", abAlnum, 40)},
		{"pulumi", tk("pu"+"l-", abHex, 40)},
		{"slack app", tk("xa"+"pp-", abAlnum+"-", 40)},
		{"slack legacy", "xo" + "xo-" + "1234567890-1234567890-abcdef"},
		{"vault", tk("hv"+"s.", abAlnum+"_-", 95)},
		{"doppler", tk("dp"+".pt.", abAlnum, 43)},
		{"postman", tk("PM"+"AK-", abHex, 24) + "-" + tk("", abHex, 34)},
		{"rubygems", tk("ruby"+"gems_", abHex, 48)},
		{"planetscale", tk("pscale"+"_tkn_", abAlnum+"._-", 43)},
		{"age", tk("AGE-SECRET"+"-KEY-1", abUpDig, 58)},
		{"square", tk("sq"+"0atp-", abAlnum+"_-", 22)},
		{"groq", tk("gs"+"k_", abAlnum, 52)},
		{"databricks", tk("da"+"pi", abHex, 32)},
		{"notion", tk("nt"+"n_", abAlnum, 46)},
		{"sentry user", tk("sn"+"tryu_", abHex, 64)},
		{"aws abia", tk("AB"+"IA", abUpDig, 16)},
		{"aws a3t", tk("A3"+"TX", abUpDig, 16)},
		{"alibaba", tk("LT"+"AI", abAlnum, 20)},
		{"1password sa", tk("op"+"s_eyJ", abAlnum+"+/", 250)},
		{"openshift", tk("sha"+"256~", abAlnum+"_-", 43)},
		{"perplexity", tk("pp"+"lx-", abAlnum, 48)},
		{"octopus", tk("AP"+"I-", abUpDig, 26)},
		{"stripe prod", tk("sk"+"_prod_", abAlnum, 24)},
		{"clojars", tk("CLO"+"JARS_", abLower+"0123456789", 60)},
		{"slack config", tk("xo"+"xe.xoxp-1-", abAlnum, 163)},
		{"bedrock short-lived", tk("bedrock"+"-api-key-", abAlnum+"+/", 120) + "=="},
		{"slack workflow hook", "https://hooks." + "slack.com/workflows/" + tk("", abAlnum, 44)},
	} {
		want := "x " + R + " y"
		if strings.HasPrefix(tok.token, "https://") {
			want = "x https://hooks.slack.com/workflows/" + R + " y"
		}
		tests = append(tests, tc{tok.rule, "x " + tok.token + " y", want})
	}
	tests = append(tests, []tc{
		// Twilio: the auth token after an account SID.
		{"twilio sid:token", "-u " + tk("A"+"C", abHex, 32) + ":" + tk("", abHex, 32) + " x", "-u " + tk("A"+"C", abHex, 32) + ":" + R + " x"},
		// curl -u / --user: the password only.
		{"curl -u", "curl -u admin:s3cr3t-P@ss https://api.example.com", "curl -u admin:" + R + " https://api.example.com"},
		{"curl --user quoted", `curl --user 'johns:h0pk1ns~21s' $URL`, `curl --user 'johns:` + R + `' $URL`},
		{"curl --user=", `curl --user=ops:pa55 -X GET`, `curl --user=ops:` + R + ` -X GET`},
		{"curl -u empty user", `curl -u ":d2LkV78zLx!t" https://x`, `curl -u ":` + R + `" https://x`},
		// A flag named like a secret key, then its value.
		{"--password", "mysqldump --password hunter2 db", "mysqldump --password " + R + " db"},
		{"--password=", "wget --password=hunter2 url", "wget --password=" + R + " url"},
		{"--api-key", `tool --api-key "k 1" --v`, `tool --api-key "` + R + `" --v`},
		{"--client-secret", "az login --client-secret abc123 --tenant t", "az login --client-secret " + R + " --tenant t"},
		{"-token", "app -token abc123", "app -token " + R},
		{"--token then flag", "gh auth --token --help", ""},
		{"creds", "AWS_CREDS=abc123 x", "AWS_CREDS=" + R + " x"},
		{"mysql -p attached", "mysql -uroot -pS3cr3t! shop", "mysql -uroot -p" + R + " shop"},
		{"mysqldump -p quoted", "mysqldump -u app -p'a b' db", "mysqldump -u app -p'" + R + "' db"},
		{"mariadb -p", "mariadb --host db -pxyz", "mariadb --host db -p" + R},
		{"sshpass -p", "sshpass -p hunter2 ssh host", "sshpass -p " + R + " ssh host"},
		// Near misses: left alone.
		{"mysql -p prompt", "mysql -u root -p shop", ""},
		{"-p without mysql", "pip install -pfoo; tar -pxf a.tar", ""},
		{"-p port", "docker run -p 8080:80 -p 443 img && ssh -p 22 host", ""},
		{"mkdir -p", "mkdir -p /tmp/a/b", ""},
		{"-u uid:gid", "docker run -u 1000:1000 img", ""},
		{"git push -u", "git push -u origin main", ""},
		{"curl -u no password", `curl -u "myusername" http://localhost:15130/`, ""},
		{"password-stdin", "docker login --password-stdin --username bob", ""},
		{"no-password", "ssh-keygen --no-password -f key", ""},
		{"git sha", "commit 3f786850e387550fdab836ed7e6dc881de23001b", ""},
		{"sha256 hex", "sha256:4b1d0e3f786850e387550fdab836ed7e6dc881de23001b4b1d0e3f786850e3", ""},
		{"uuid", "id 0190c2a4-7b7e-7c3a-9d2e-1f2a3b4c5d6e", ""},
		{"words", "the shopify api and hf models, gitlab pipelines, SendGrid SG.mail, Twilio SKU", ""},
		{"hf short", "hf_hub_download and hf_transfer", ""},
		{"glpat short", "glpat-short", ""},
		{"SK not hex", "SK" + strings.Repeat("Z", 32), ""},
		{"SK too long", "SK" + strings.Repeat("a", 33), ""},
		{"API- lower", "API-version-2024-01-01", ""},
		{"ya29 short", "ya29.abc", ""},
		{"url port", "http://localhost:8080/path", ""},
	}...)
	for _, c := range tests {
		t.Run(c.rule, func(t *testing.T) {
			want := c.want
			if want == "" {
				want = c.in
			}
			if got := r.String(c.in); got != want {
				t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, want)
			}
			if got := r.String(want); got != want {
				t.Errorf("not idempotent: %q → %q", want, got)
			}
			// The same through a Stream, a byte at a time.
			st := r.NewStream()
			var out []byte
			for i := 0; i < len(c.in); i++ {
				out = st.Write(out, []byte{c.in[i]})
			}
			if got := string(st.EndLine(out)); got != want {
				t.Errorf("Stream(%q) = %q", c.in, got)
			}
		})
	}
}
