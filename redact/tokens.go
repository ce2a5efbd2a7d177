package redact

import "strings"

// Well-known tokens: the prefix table and the shapes a prefix alone cannot
// describe (Slack, GitHub, AWS, Twilio, Bearer, Slack webhooks, JWTs).

// tokRule is a well-known token shape: a literal prefix, then at least min
// bytes of class cls (exact: exactly min, then no letter or digit).
type tokRule struct {
	prefix string
	cls    uint16
	min    int
	exact  bool
}

// tokRules are the token prefixes that are a secret by themselves (the whole
// token is replaced). The sources are the vendors' documented formats, as
// collected by gitleaks' default rule set (see README, Security model).
var tokRules = []tokRule{
	{"sk-", clsTokDash, 20, false},                    // OpenAI, Anthropic (sk-ant-…), DeepSeek…
	{"sk_live_", clsAlnum, 10, false},                 // Stripe
	{"sk_test_", clsAlnum, 10, false},                 // Stripe
	{"rk_live_", clsAlnum, 10, false},                 // Stripe restricted
	{"rk_test_", clsAlnum, 10, false},                 // Stripe restricted
	{"github_pat_", clsTokDash, 20, false},            // GitHub fine-grained
	{"AIza", clsTokDash, 35, false},                   // Google API key
	{"whsec_", clsB64, 10, false},                     // Stripe/Svix webhook secret
	{"npm_", clsAlnum, 36, false},                     // npm
	{"pypi-", clsTokDash, 16, false},                  // PyPI
	{"hf_", clsAlnum, 30, false},                      // Hugging Face
	{"api_org_", clsAlnum, 30, false},                 // Hugging Face organisation
	{"glpat-", clsTokDash | clsIdent, 20, false},      // GitLab personal access token
	{"gldt-", clsTokDash, 20, false},                  // GitLab deploy token
	{"glptt-", clsTokDash, 20, false},                 // GitLab pipeline trigger
	{"glrt-", clsTokDash | clsIdent, 20, false},       // GitLab runner
	{"glcbt-", clsTokDash, 20, false},                 // GitLab CI/CD job
	{"glimt-", clsTokDash, 20, false},                 // GitLab incoming mail
	{"glagent-", clsTokDash, 20, false},               // GitLab agent
	{"gloas-", clsTokDash, 20, false},                 // GitLab OAuth app secret
	{"glsoat-", clsTokDash, 20, false},                // GitLab SCIM
	{"glffct-", clsTokDash, 20, false},                // GitLab feature flags client
	{"GR1348941", clsTokDash, 20, false},              // GitLab runner registration
	{"SG.", clsTokDash | clsIdent, 40, false},         // SendGrid (SG.<22>.<43>)
	{"ya29.", clsTokDash, 20, false},                  // Google OAuth access token
	{"SK", clsHex, 32, true},                          // Twilio API key
	{"dop_v1_", clsHex, 64, true},                     // DigitalOcean
	{"doo_v1_", clsHex, 64, true},                     // DigitalOcean OAuth
	{"dor_v1_", clsHex, 64, true},                     // DigitalOcean refresh
	{"shpat_", clsHex, 32, true},                      // Shopify
	{"shpca_", clsHex, 32, true},                      // Shopify
	{"shppa_", clsHex, 32, true},                      // Shopify
	{"shpss_", clsHex, 32, true},                      // Shopify shared secret
	{"glc_", clsB64, 32, false},                       // Grafana Cloud
	{"glsa_", clsTokDash, 32, false},                  // Grafana service account
	{"lin_api_", clsAlnum, 40, false},                 // Linear
	{"pul-", clsHex, 40, true},                        // Pulumi
	{"xapp-", clsAlnumDash, 20, false},                // Slack app-level
	{"sntrys_", clsB64 | clsTokDash, 40, false},       // Sentry org
	{"sntryu_", clsHex, 64, true},                     // Sentry user
	{"hvs.", clsTokDash, 24, false},                   // HashiCorp Vault service
	{"hvb.", clsTokDash, 24, false},                   // HashiCorp Vault batch
	{"dp.pt.", clsAlnum, 40, false},                   // Doppler
	{"PMAK-", clsHex | clsAlnumDash, 40, false},       // Postman
	{"rubygems_", clsHex, 48, true},                   // RubyGems
	{"pscale_tkn_", clsTokDash | clsIdent, 32, false}, // PlanetScale
	{"pscale_pw_", clsTokDash | clsIdent, 32, false},  // PlanetScale
	{"AGE-SECRET-KEY-1", clsUpDig, 50, false},         // age
	{"sq0atp-", clsTokDash, 22, false},                // Square
	{"sq0csp-", clsTokDash, 40, false},                // Square
	{"ATATT3", clsTokDash | clsB64, 100, false},       // Atlassian
	{"gsk_", clsAlnum, 40, false},                     // Groq
	{"xai-", clsAlnum, 60, false},                     // xAI
	{"dapi", clsHex, 32, true},                        // Databricks
	{"ntn_", clsAlnum, 40, false},                     // Notion
	{"sk_prod_", clsAlnum, 10, false},                 // Stripe
	{"rk_prod_", clsAlnum, 10, false},                 // Stripe
	{"glft-", clsTokDash, 20, false},                  // GitLab feed token
	{"ops_eyJ", clsB64, 100, false},                   // 1Password service account
	{"p8e-", clsAlnum, 32, true},                      // Adobe client secret
	{"LTAI", clsAlnum, 20, true},                      // Alibaba access key
	{"AKCp", clsAlnum, 69, true},                      // JFrog Artifactory
	{"ABSK", clsB64, 109, false},
	{"bedrock-api-key-", clsB64, 20, false},             // Amazon Bedrock
	{"4b1d", clsAlnum, 38, true},                        // ClickHouse Cloud
	{"v1.0-", clsHex | clsAlnumDash, 170, false},        // Cloudflare origin CA
	{"duffel_test_", clsTokDash | clsB64, 43, false},    // Duffel
	{"duffel_live_", clsTokDash | clsB64, 43, false},    // Duffel
	{"dt0c01.", clsAlnum | clsIdent, 89, false},         // Dynatrace
	{"EZAK", clsAlnum, 54, true},                        // EasyPost
	{"EZTK", clsAlnum, 54, true},                        // EasyPost test
	{"EAAC", clsAlnum, 100, false},                      // Facebook
	{"EAAM", clsAlnum, 100, false},                      // Facebook
	{"EAAA", clsTokDash, 22, false},                     // Square
	{"FLWSECK_TEST-", clsAlnumDash, 12, false},          // Flutterwave
	{"FLWSECK-", clsAlnumDash, 32, false},               // Flutterwave
	{"fo1_", clsTokDash, 43, false},                     // Fly.io
	{"fm1a_", clsB64, 100, false},                       // Fly.io
	{"fm1r_", clsB64, 100, false},                       // Fly.io
	{"fm2_", clsB64, 100, false},                        // Fly.io
	{"fio-u-", clsTokDash | clsB64, 64, false},          // Frame.io
	{"HRKU-AA", clsTokDash, 58, false},                  // Heroku
	{"ico-", clsAlnum, 32, true},                        // Infracost
	{"s-s4t2ud-", clsHex, 64, true},                     // 42 intra
	{"s-s4t2af-", clsHex, 64, true},                     // 42 intra
	{"API-", clsUpDig, 26, true},                        // Octopus Deploy
	{"sha256~", clsTokDash, 43, false},                  // OpenShift
	{"pplx-", clsAlnum, 48, false},                      // Perplexity
	{"pnu_", clsAlnum, 36, false},                       // Prefect
	{"rdme_", clsAlnum, 70, false},                      // ReadMe
	{"tk-us-", clsTokDash, 48, false},                   // Scalingo
	{"xkeysib-", clsAlnumDash, 64, false},               // Brevo (Sendinblue)
	{"sm_aat_", clsAlnum, 16, true},                     // SettleMint
	{"sm_pat_", clsAlnum, 16, true},                     // SettleMint
	{"sm_sat_", clsAlnum, 16, true},                     // SettleMint
	{"shippo_live_", clsHex, 40, true},                  // Shippo
	{"shippo_test_", clsHex, 40, true},                  // Shippo
	{"CLOJARS_", clsAlnum, 60, false},                   // Clojars
	{"xoxe.xoxb-", clsAlnumDash, 100, false},            // Slack configuration
	{"xoxe.xoxp-", clsAlnumDash, 100, false},            // Slack configuration
	{"pscale_oauth_", clsTokDash | clsIdent, 32, false}, // PlanetScale
}

// tokByFirst indexes tokRules by their first byte (built once, never changed).
var tokByFirst = func() (t [256][]tokRule) {
	for _, r := range tokRules {
		t[r.prefix[0]] = append(t[r.prefix[0]], r)
	}
	return
}()

// wordToken matches a token at the word start i: a JWT (skipping the
// "eyJ" that a failed match already ruled out, before *jwtDead) or a
// well-known prefix.
func wordToken[T rtext](b T, i int, partial bool, jwtDead *int) rspan {
	if b[i] != 'e' {
		return tokenAt(b, i, partial)
	}
	sp := rspan{s: -1, e: -1, t: inRun(clsTokDash | clsIdent)}
	if i >= *jwtDead && hasPrefixAt(b, i, "eyJ") {
		var dead int
		if sp.s, sp.e, dead = jwtAt(b, i, partial); sp.s < 0 {
			*jwtDead = dead
		}
	}
	return sp
}

// tokenAt matches a well-known token at i (at a word start): first the
// prefix table (tokByFirst), then the shapes a prefix alone cannot describe.
// It returns the token's span, or s = e = -1 when none starts at i.
func tokenAt[T rtext](b T, i int, partial bool) rspan {
	// The prefix table, inline: it runs at every candidate word start.
	d := b[i+1] // the caller checked i+1 < len(b)
	for _, tr := range tokByFirst[b[i]] {
		if tr.prefix[1] != d || !hasPrefixAt(b, i, tr.prefix) {
			continue
		}
		if tr.exact {
			// An exact token: its prefix then exactly min bytes of its
			// class, not followed by a letter or digit.
			k := i + len(tr.prefix)
			for k < len(b) && k-i < len(tr.prefix)+tr.min && rcls[b[k]]&tr.cls != 0 {
				k++
			}
			if k-i == len(tr.prefix)+tr.min && (k == len(b) || !rIsAlnum(b[k])) {
				return rspan{i, k, inRun(clsAlnum)}
			}
			continue
		}
		if s, e := runFrom(b, i, len(tr.prefix), tr.cls, tr.min); s >= 0 {
			return rspan{s, e, inRun(tr.cls)}
		}
	}
	switch b[i] {
	case 'x':
		return slackToken(b, i)
	case 'g':
		return githubToken(b, i)
	case 'A':
		return awsOrTwilio(b, i, partial)
	case 'B':
		// Inline: "Bearer " is the commonest credential in logs.
		if hasPrefixAt(b, i, "Bearer ") {
			k := i + 7
			for k < len(b) && b[k] == ' ' {
				k++
			}
			if partial && k == len(b) {
				return rspan{s: k, e: k, t: rterm{kind: termCtx, ctx: "Bearer "}}
			}
			s, e := runFrom(b, k, 0, clsBearer, 16)
			if s < 0 {
				return rspan{s: -1, e: -1}
			}
			for e < len(b) && b[e] == '=' {
				e++
			}
			return rspan{s, e, inRun(clsBearer | clsB64)}
		}
	case 'h':
		return slackHook(b, i)
	}
	return rspan{s: -1, e: -1}
}

// slackToken matches a Slack token at i: xox, one of a b e o p r s, '-',
// then at least 10 letters, digits or dashes.
func slackToken[T rtext](b T, i int) rspan {
	if i+4 < len(b) && b[i+1] == 'o' && b[i+2] == 'x' && b[i+4] == '-' && strings.IndexByte("abeoprs", b[i+3]) >= 0 {
		s, e := runFrom(b, i, 5, clsAlnumDash, 10)
		return rspan{s, e, inRun(clsAlnumDash)}
	}
	return rspan{s: -1, e: -1}
}

// githubToken matches a GitHub token at i: gh, one of p o u s r, '_', then
// at least 30 letters or digits.
func githubToken[T rtext](b T, i int) rspan {
	if i+3 < len(b) && b[i+1] == 'h' && b[i+3] == '_' && strings.IndexByte("pousr", b[i+2]) >= 0 {
		s, e := runFrom(b, i, 4, clsAlnum, 30)
		return rspan{s, e, inRun(clsAlnum)}
	}
	return rspan{s: -1, e: -1}
}

// awsOrTwilio matches at i an AWS access key id (AKIA, ASIA, ABIA, ACCA or
// A3T, 20 upper-case letters and digits in all, not followed by a letter or
// digit) or else a Twilio SID and its auth token (twilioSecret).
func awsOrTwilio[T rtext](b T, i int, partial bool) rspan {
	if hasPrefixAt(b, i, "AKIA") || hasPrefixAt(b, i, "ASIA") || hasPrefixAt(b, i, "ABIA") || hasPrefixAt(b, i, "ACCA") || hasPrefixAt(b, i, "A3T") {
		k := i + 4
		for k < len(b) && k-i < 20 && rcls[b[k]]&clsUpDig != 0 {
			k++
		}
		if k-i == 20 && (k == len(b) || !rIsAlnum(b[k])) {
			return rspan{i, k, inRun(clsAlnum)}
		}
		return rspan{s: -1, e: -1}
	}
	if hasPrefixAt(b, i, "AC") {
		return twilioSecret(b, i, partial)
	}
	return rspan{s: -1, e: -1}
}

// slackHook matches a Slack webhook URL's secret path: what follows
// hooks.slack.com/services/, /workflows/ or /triggers/ at i.
func slackHook[T rtext](b T, i int) rspan {
	for _, hook := range []string{"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/"} {
		if hasPrefixAt(b, i, hook) {
			s, e := runFrom(b, i+len(hook), 0, clsSlack, 1)
			return rspan{s, e, inRun(clsSlack)}
		}
	}
	return rspan{s: -1, e: -1}
}

// twilioSecret: a Twilio account SID (AC + 32 hex) followed by ':' and its
// auth token, as curl -u and connection strings write them: the token.
func twilioSecret[T rtext](b T, i int, partial bool) rspan {
	k := i + 2
	for k < len(b) && k-i < 34 && rcls[b[k]]&clsHex != 0 {
		k++
	}
	if k-i != 34 || k >= len(b) || b[k] != ':' {
		return rspan{s: -1, e: -1}
	}
	s, e := runFrom(b, k+1, 0, clsAlnum, 16)
	if s < 0 {
		return rspan{s: -1, e: -1}
	}
	return rspan{s, e, inRun(clsAlnum)}
}

// runFrom matches b[i:i+pre] (already checked) followed by at least min bytes
// of class cls; it returns [i, end) or -1, -1.
func runFrom[T rtext](b T, i, pre int, cls uint16, min int) (int, int) {
	k := i + pre
	for k < len(b) && rcls[b[k]]&cls != 0 {
		k++
	}
	if k-(i+pre) < min {
		return -1, -1
	}
	return i, k
}

// jwtAt matches eyJ<seg>.<seg>.<seg?> with a header of at least 10 bytes.
// On failure it returns dead, the end of the header run: any "eyJ" starting
// before it fails the same way, so the caller skips those (linear scan). In
// a partial text, a header or payload that reaches its end is taken for a
// token still arriving.
func jwtAt[T rtext](b T, i int, partial bool) (s, e, dead int) {
	n := len(b)
	k := i
	for seg := 0; seg < 3; seg++ {
		st := k
		for k < n && rcls[b[k]]&clsTokDash != 0 {
			k++
		}
		if seg == 0 {
			dead = k
		}
		if partial && k == n && (seg > 0 || k-st >= 10) {
			return i, n, dead
		}
		if seg == 0 && k-st < 10 || seg == 1 && k-st < 2 {
			return -1, -1, dead
		}
		if seg < 2 {
			if k >= n || b[k] != '.' {
				return -1, -1, dead
			}
			k++
		}
	}
	return i, k, dead
}
