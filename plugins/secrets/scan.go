package secrets

// The scanner: one pass over the text, dispatching on each byte to the
// detectors that can start there. Every detector reads a bounded window or
// a maximal run of a character class, and refuses to start inside a run of
// its own class, so each run is read at most a few times: the scan is
// linear in the text, whatever the text. A position's detectors do not
// depend on what matched elsewhere, so the result (a mask of kinds) is the
// same in any implementation that follows these rules; the shipped module
// (rust/scan.rs) is a line-by-line port that also skips eight bytes a step
// where none of them starts a detector (the same result, fewer loop
// iterations, each of which costs a guest a deadline check).

// A match is reported as a bit of the mask unless its kind is disabled
// or its token is allow-listed.
func (c *config) found(k Kind, token string) uint32 {
	if c.disabled&(1<<k) != 0 {
		return 0
	}
	for _, a := range c.allow {
		if token == a {
			return 0
		}
	}
	return 1 << k
}

// starts are the bytes at which a detector may match: each format is
// recognised at its rarest early byte (the 'J' of "eyJ", the 'k' of
// "sk-"), so that ordinary text mostly skips through the table.
var starts = [256]bool{'A': true, 'S': true, 'g': true, 'x': true, 'k': true, 'J': true, '-': true, '=': true, ':': true}

// scan returns the kinds of secret in s.
func (c *config) scan(s string) uint32 {
	var m uint32
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !c.starts[b] {
			continue
		}
		switch b {
		case 'A':
			m |= c.awsKeyID(s, i)
			if has(s, i, "AccountKey=") && !prevIs(s, i, isAlnum) {
				m |= c.azure(s, i+11)
			}
		case 'S':
			if has(s, i, "SharedAccessKey=") && !prevIs(s, i, isAlnum) {
				m |= c.azure(s, i+16)
			}
		case 'g':
			m |= c.github(s, i)
		case 'x':
			m |= c.slack(s, i)
		case 'k':
			if i >= 1 && (s[i-1] == 's' || s[i-1] == 'r') {
				m |= c.skKey(s, i-1)
			}
			if i >= 3 && has(s, i-3, "hooks.slack.com/services/") {
				j := i - 3 + 25
				if e := run(s, j, isAlnumSlash); e-j >= 30 {
					m |= c.found(SlackWebhook, s[i-3:e])
				}
			}
		case '-':
			m |= c.pem(s, i)
		case 'J':
			if i >= 2 {
				m |= c.jwt(s, i-2)
			}
		case '=', ':':
			m |= c.assignment(s, i)
		}
		if c.firsts[b] {
			m |= c.prefixed(s, i)
		}
	}
	return m
}

// awsKeyID: AKIA or ASIA and 16 of [A-Z0-9], alone.
func (c *config) awsKeyID(s string, i int) uint32 {
	if !(has(s, i, "AKIA") || has(s, i, "ASIA")) || prevIs(s, i, isAlnum) || i+20 > len(s) {
		return 0
	}
	for j := i + 4; j < i+20; j++ {
		if !isUpperDigit(s[j]) {
			return 0
		}
	}
	if i+20 < len(s) && isAlnum(s[i+20]) {
		return 0
	}
	return c.found(AWSAccessKey, s[i:i+20])
}

// azure: the base64 value of an AccountKey= or SharedAccessKey= (a
// storage account key is 88 characters, a Service Bus key 44).
func (c *config) azure(s string, j int) uint32 {
	e := run(s, j, isB64)
	if e-j < 40 {
		return 0
	}
	for e < len(s) && s[e] == '=' {
		e++
	}
	return c.found(AzureStorageKey, s[j:e])
}

// github: ghp_, gho_, ghu_, ghs_, ghr_ and 36 or more of [A-Za-z0-9];
// github_pat_ and 60 or more of [A-Za-z0-9_].
func (c *config) github(s string, i int) uint32 {
	if prevIs(s, i, isWord) {
		return 0
	}
	if has(s, i, "github_pat_") {
		if e := run(s, i+11, isWord); e-(i+11) >= 60 {
			return c.found(GitHubToken, s[i:e])
		}
		return 0
	}
	if i+4 > len(s) || s[i+1] != 'h' || s[i+3] != '_' || !oneOf(s[i+2], "pousr") {
		return 0
	}
	if e := run(s, i+4, isAlnum); e-(i+4) >= 36 {
		return c.found(GitHubToken, s[i:e])
	}
	return 0
}

// slack: xoxb-, xoxp-, xoxa-, xoxr-, xoxs- and 20 or more of [A-Za-z0-9-].
func (c *config) slack(s string, i int) uint32 {
	if !has(s, i, "xox") || i+5 > len(s) || s[i+4] != '-' || !oneOf(s[i+3], "bpars") || prevIs(s, i, isSlack) {
		return 0
	}
	if e := run(s, i+5, isSlack); e-(i+5) >= 20 {
		return c.found(SlackToken, s[i:e])
	}
	return 0
}

// pem: -----BEGIN <...>PRIVATE KEY<...>----- followed by a base64 body (or
// an encrypted key's Proc-Type header), possibly after JSON's \n escapes.
// Preceded by "private_key" (a service-account JSON file), it is GCP's.
// Private keys are never allow-listed.
func (c *config) pem(s string, i int) uint32 {
	if !has(s, i, "-----BEGIN ") {
		return 0
	}
	j := i + 11
	k := j
	for k < len(s) && k-j <= 40 && (isUpperDigit(s[k]) || s[k] == ' ') {
		k++
	}
	if !has(s, k, "-----") || !contains(s[j:k], "PRIVATE KEY") {
		return 0
	}
	b := k + 5
	for b < len(s) && b-(k+5) < 16 {
		if oneOf(s[b], " \t\r\n") {
			b++
		} else if s[b] == '\\' && b+1 < len(s) && (s[b+1] == 'n' || s[b+1] == 'r') {
			b += 2
		} else {
			break
		}
	}
	if !has(s, b, "Proc-Type:") && run(s, b, isB64Pad)-b < 40 {
		return 0
	}
	if contains(s[max(0, i-24):i], `"private_key"`) {
		return c.found(GCPServiceAccount, "")
	}
	return c.found(PrivateKey, "")
}

// jwt: three base64url segments (the header starting "eyJ", that is
// `{"`, and decoding to an object with "alg"; a signature of 16 or more).
func (c *config) jwt(s string, i int) uint32 {
	if !has(s, i, "eyJ") || prevIs(s, i, isURL64) {
		return 0
	}
	e1 := run(s, i, isURL64)
	if e1-i > 1024 || e1 >= len(s) || s[e1] != '.' {
		return 0
	}
	e2 := run(s, e1+1, isURL64)
	if e2-(e1+1) < 2 || e2 >= len(s) || s[e2] != '.' {
		return 0
	}
	e3 := run(s, e2+1, isURL64)
	if e3-(e2+1) < 16 || !headerHasAlg(s[i:e1]) {
		return 0
	}
	return c.found(JWT, s[i:e3])
}

// headerHasAlg decodes a base64url JWT header (at most 1024 characters)
// and reports whether it is an object naming "alg".
func headerHasAlg(seg string) bool {
	var buf [768]byte
	n := 0
	acc, bits := uint32(0), 0
	for i := 0; i < len(seg); i++ {
		acc = acc<<6 | uint32(url64Value(seg[i]))
		bits += 6
		if bits >= 8 {
			bits -= 8
			buf[n] = byte(acc >> bits)
			n++
			acc &= 1<<bits - 1
		}
	}
	return n > 0 && buf[0] == '{' && contains(string(buf[:n]), `"alg"`)
}

func url64Value(b byte) byte {
	switch {
	case b >= 'A' && b <= 'Z':
		return b - 'A'
	case b >= 'a' && b <= 'z':
		return b - 'a' + 26
	case b >= '0' && b <= '9':
		return b - '0' + 52
	case b == '-':
		return 62
	}
	return 63
}

// skKey: Stripe's sk_live_ and rk_live_ (24 or more of [A-Za-z0-9]);
// Anthropic's sk-ant- (32 or more of [A-Za-z0-9_-]); OpenAI's sk- (32 or
// more of [A-Za-z0-9_-] with a digit, an upper- and a lower-case letter,
// which ordinary kebab-case words lack).
func (c *config) skKey(s string, i int) uint32 {
	if has(s, i, "sk_live_") || has(s, i, "rk_live_") {
		if prevIs(s, i, isWord) {
			return 0
		}
		if e := run(s, i+8, isAlnum); e-(i+8) >= 24 {
			return c.found(StripeKey, s[i:e])
		}
		return 0
	}
	if !has(s, i, "sk-") || prevIs(s, i, isURL64) {
		return 0
	}
	if has(s, i, "sk-ant-") {
		if e := run(s, i+7, isURL64); e-(i+7) >= 32 {
			return c.found(AnthropicKey, s[i:e])
		}
		return 0
	}
	e := run(s, i+3, isURL64)
	if e-(i+3) < 32 {
		return 0
	}
	var digit, upper, lower bool
	for j := i + 3; j < e; j++ {
		b := s[j]
		digit = digit || b >= '0' && b <= '9'
		upper = upper || b >= 'A' && b <= 'Z'
		lower = lower || b >= 'a' && b <= 'z'
	}
	if !digit || !upper || !lower {
		return 0
	}
	return c.found(OpenAIKey, s[i:e])
}

// prefixed: a config prefix and min or more of [A-Za-z0-9_-].
func (c *config) prefixed(s string, i int) uint32 {
	var m uint32
	if prevIs(s, i, isURL64) {
		return 0
	}
	for n := range c.prefixes {
		p := &c.prefixes[n]
		if has(s, i, p.text) {
			j := i + len(p.text)
			if e := run(s, j, isURL64); e-j >= p.min {
				m |= c.found(builtinKinds+Kind(n), s[i:e])
			}
		}
	}
	return m
}
