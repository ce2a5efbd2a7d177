package redact

// Command-line flags that carry a secret (curl -u, --password, mysql -p…).

// flagValue handles a command-line flag at i (at a word start): curl's
// "-u user:PASS", "--user user:PASS", "--user=user:PASS" (the password
// only), and a flag named like a secret key followed by its value as the
// next word: "--password PASS", "--api-key PASS", "-token PASS" (the "="
// form is a key/value). A next word that is another flag is no value.
// "-p" is a password only after mysql, mariadb or sshpass (shortPassword);
// uid:gid ("-u 1000:1000") is no user:password.
func flagValue[T rtext](r *Redactor, b T, i int, partial bool) rspan {
	n := len(b)
	none := rspan{s: -1, e: -1}
	j := i + 1
	if j < n && b[j] == '-' {
		j++
	}
	ns := j
	for j < n && rcls[b[j]]&clsIdent != 0 {
		j++
	}
	if j > ns && ns == i+1 && b[ns] == 'p' {
		return shortPassword(b, i, j, partial)
	}
	if j == ns || j >= n {
		return none
	}
	if name := b[ns:j]; equalT(name, "u") && ns == i+1 || equalT(name, "user") && ns == i+2 {
		k := j
		if b[k] == '=' {
			k++
		} else if b[k] != ' ' && b[k] != '\t' {
			return none
		}
		return userPassword(b, k, partial)
	}
	if b[j] != ' ' && b[j] != '\t' || !keyMatch(r, b, j) {
		return none
	}
	k := j
	for k < n && (b[k] == ' ' || b[k] == '\t') {
		k++
	}
	if k < n && b[k] == '-' {
		return none
	}
	return valueAt(b, j, partial)
}

// shortPassword handles "-p…" at i (name up to j): MySQL's and MariaDB's
// attached "-pPASS" / "-p'PASS'" when such a client is named in the 256
// bytes before it, and sshpass's "-p PASS". Elsewhere "-p" is a port or a
// parents flag.
func shortPassword[T rtext](b T, i, j int, partial bool) rspan {
	none := rspan{s: -1, e: -1}
	before := b[max(0, i-256):i]
	at := byte(0) // the byte after "-p", 0 at the end
	if j == i+2 && j < len(b) {
		at = b[j]
	}
	switch {
	case (at == ' ' || at == '\t') && indexT(before, "sshpass ") >= 0:
		return valueAt(b, j, partial)
	case indexT(before, "mysql") < 0 && indexT(before, "mariadb") < 0:
		return none
	case at == '\'' || at == '"':
		return valueAt(b, j, partial)
	case j > i+2:
		e := i + 2
		for e < len(b) && rcls[b[e]]&clsValEnd == 0 {
			e++
		}
		return rspan{i + 2, e, outRun(clsValEnd)}
	}
	return none
}

// userPassword returns the password of "user:PASS" after the blanks at k
// (quoted or not), when both halves are not all digits (uid:gid).
func userPassword[T rtext](b T, k int, partial bool) rspan {
	n := len(b)
	none := rspan{s: -1, e: -1}
	for k < n && (b[k] == ' ' || b[k] == '\t') {
		k++
	}
	if k >= n {
		if partial {
			return rspan{s: n, e: n, t: rterm{kind: termCtx, ctx: "-u "}}
		}
		return none
	}
	t := outRun(clsValEnd)
	if c := b[k]; c == '"' || c == '\'' {
		t = rterm{kind: termQuote, q: c}
		k++
	}
	colon, e := -1, k
	for ; e < n; e++ {
		c := b[e]
		if t.kind == termQuote && c == t.q || t.kind == termOut && rcls[c]&clsValEnd != 0 {
			break
		}
		if c == ':' && colon < 0 {
			colon = e
		}
	}
	if colon < 0 || colon+1 == e || allDigits(b[k:colon]) && allDigits(b[colon+1:e]) && !(partial && e == n) {
		return none
	}
	return rspan{colon + 1, e, t}
}

func allDigits[T rtext](b T) bool {
	for i := 0; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return false
		}
	}
	return len(b) > 0
}
