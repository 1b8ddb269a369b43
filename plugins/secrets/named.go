package secrets

// Secrets without a format of their own: a high-entropy value assigned to
// a name that says it is secret (password=..., "api_key": "...",
// client_secret: ...), and the AWS secret access key, which is 40 base64
// characters assigned to a name such as aws_secret_access_key.

// secretNames are the parts of a name (lower-cased) that make its value a
// secret.
var secretNames = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key",
	"access_key", "accesskey", "private_key", "privatekey", "auth_key", "credential"}

// notSecretEnds are name endings that make the value a reference to a
// secret, or data about one, rather than the secret: secret_name,
// token_type, secretKeyRef, password_file, token_url.
var notSecretEnds = []string{"name", "id", "ids", "type", "file", "path", "ref", "url", "uri", "arn", "count",
	"length", "size", "version", "kind", "mode", "field", "env", "var", "header"}

// Bounds of an assignment: the name's last bytes compared, the value's
// length, and the entropy a value needs, in 1/1024 bits per byte.
const (
	maxName       = 64
	minValue      = 16
	maxValue      = 256
	minEntropy    = 3 * 1024 // tuned on the detection corpus (corpus_test.go)
	minEntropyHex = 5 * 512  // hex has 4 bits a byte at most: 16 random ones often have less than 3
	awsSecretSize = 40
)

// assignment reads name <sep> value around the separator at i ('=' or
// ':'; also ":=", "==", "=>"), with optional quotes and blanks around both.
func (c *config) assignment(s string, i int) uint32 {
	if s[i] == '=' && i > 0 && oneOf(s[i-1], ":=!<>") || s[i] == ':' && has(s, i+1, "//") {
		return 0 // read from the separator's first byte; a URL's scheme
	}
	// The value first: most separators in ordinary text have a short one,
	// and reading a value costs less than judging a name.
	j := i + 1
	if j < len(s) && (s[j] == '=' || s[j] == '>') {
		j++
	}
	for j < len(s) && j-i < 10 && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j < len(s) && oneOf(s[j], "\"'`") {
		j++
	}
	e := j
	for e < len(s) && e-j <= maxValue && isValue(s[e]) {
		e++
	}
	if e-j < minValue || e-j > maxValue {
		return 0
	}
	k := i
	for k > 0 && i-k < 8 && (s[k-1] == ' ' || s[k-1] == '\t') {
		k--
	}
	if k > 0 && (s[k-1] == '"' || s[k-1] == '\'') {
		k--
	}
	n := k
	for n > 0 && k-n < maxName && isIdent(s[n-1]) {
		n--
	}
	if n == k {
		return 0
	}
	return c.named(s[n:k], s[j:e])
}

// named judges a value (a maximal run of value bytes, cut after 257)
// assigned to a name; check also calls it for an argument's member.
func (c *config) named(name, v string) uint32 {
	if len(v) < minValue || len(v) > maxValue || !secretName(name) {
		return 0
	}
	if (containsFold(name, "aws_secret") || containsFold(name, "secret_access_key") || containsFold(name, "secretaccesskey")) &&
		len(v) == awsSecretSize && run(v, 0, isB64) == len(v) {
		return c.found(AWSSecretKey, v)
	}
	// A value that is a secret of a known format is reported as that
	// (GITHUB_TOKEN=ghp_...: a GitHub token, not also a named secret).
	if contains(v, "://") || !mixed(v) || dotted(v) || !highEntropy(v) || c.scan(v) != 0 {
		return 0
	}
	return c.found(NamedSecret, v)
}

func secretName(name string) bool {
	for _, e := range notSecretEnds {
		if len(name) >= len(e) && containsFold(name[len(name)-len(e):], e) {
			return false
		}
	}
	for _, w := range secretNames {
		if containsFold(name, w) {
			return true
		}
	}
	return false
}

// mixed: a digit, or both cases and a symbol: what generated secrets
// have and words, identifiers (clientSecretExpiresAt), kebab-case phrases
// and placeholders (your-api-key-here) lack. A generated secret of letters
// alone is missed (of 20 random letters and digits, 3 in 100 have no digit).
func mixed(v string) bool {
	var digit, upper, lower, symbol bool
	for i := 0; i < len(v); i++ {
		b := v[i]
		digit = digit || b >= '0' && b <= '9'
		upper = upper || b >= 'A' && b <= 'Z'
		lower = lower || b >= 'a' && b <= 'z'
		symbol = symbol || oneOf(b, "+/!@#%^&*?|~")
	}
	return digit || upper && lower && symbol
}

// dotted: a member access in code (options.clientSecret,
// process.env.API_TOKEN), the usual right side of a secret-named
// assignment in source: it starts with a letter or '_', and every '.' is
// followed by one.
func dotted(v string) bool {
	if !isLetter(v[0]) || !contains(v, ".") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] == '.' && (i+1 == len(v) || !isLetter(v[i+1])) {
			return false
		}
	}
	return true
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_' }

// hex: every byte a hex digit of one case.
func hex(v string) bool {
	return run(v, 0, func(b byte) bool { return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' }) == len(v) ||
		run(v, 0, func(b byte) bool { return b >= '0' && b <= '9' || b >= 'A' && b <= 'F' }) == len(v)
}

// highEntropy: the value's Shannon entropy over its bytes is at least
// minEntropy, computed in integers (n·H = n·log2 n − Σ c·log2 c, from a
// table) so that every implementation agrees to the bit.
func highEntropy(v string) bool {
	var counts [256]uint16
	for i := 0; i < len(v); i++ {
		counts[v[i]]++
	}
	sum := int64(0)
	for i := 0; i < len(v); i++ {
		if c := counts[v[i]]; c != 0 {
			sum += nlog2n[c]
			counts[v[i]] = 0
		}
	}
	min := int64(minEntropy)
	if hex(v) {
		min = minEntropyHex
	}
	return nlog2n[len(v)]-sum >= min*int64(len(v))
}

// nlog2n[x] is round(x·log2(x)·1024).
var nlog2n = [maxValue + 1]int64{
	0, 0, 2048, 4869, 8192, 11888, 15882, 20123, 24576, 29214, 34017, 38967,
	44052, 49260, 54582, 60010, 65536, 71155, 76860, 82648, 88513, 94452, 100462, 106539,
	112680, 118883, 125145, 131463, 137836, 144263, 150740, 157266, 163840, 170460, 177125, 183834,
	190584, 197376, 204207, 211078, 217986, 224931, 231913, 238929, 245980, 253065, 260182, 267331,
	274512, 281724, 288965, 296237, 303537, 310866, 318222, 325606, 333017, 340454, 347917, 355406,
	362919, 370458, 378020, 385606, 393216, 400849, 408504, 416182, 423882, 431604, 439347, 447111,
	454896, 462702, 470528, 478373, 486239, 494124, 502028, 509951, 517892, 525853, 533831, 541827,
	549842, 557873, 565923, 573989, 582072, 590172, 598289, 606422, 614572, 622737, 630919, 639116,
	647328, 655556, 663799, 672058, 680331, 688619, 696921, 705239, 713570, 721916, 730275, 738649,
	747037, 755438, 763852, 772280, 780722, 789177, 797644, 806125, 814618, 823125, 831644, 840175,
	848719, 857275, 865843, 874424, 883016, 891620, 900237, 908864, 917504, 926155, 934818, 943491,
	952177, 960873, 969580, 978299, 987028, 995769, 1004520, 1013282, 1022054, 1030837, 1039630, 1048434,
	1057248, 1066073, 1074908, 1083752, 1092607, 1101472, 1110347, 1119231, 1128125, 1137029, 1145943, 1154866,
	1163799, 1172742, 1181693, 1190654, 1199625, 1208604, 1217593, 1226591, 1235598, 1244614, 1253639, 1262673,
	1271715, 1280767, 1289827, 1298896, 1307973, 1317059, 1326154, 1335257, 1344369, 1353489, 1362617, 1371753,
	1380898, 1390051, 1399213, 1408382, 1417559, 1426745, 1435938, 1445140, 1454349, 1463566, 1472791, 1482024,
	1491264, 1500512, 1509768, 1519032, 1528303, 1537581, 1546867, 1556161, 1565462, 1574770, 1584086, 1593409,
	1602739, 1612076, 1621421, 1630773, 1640132, 1649498, 1658871, 1668252, 1677639, 1687033, 1696434, 1705842,
	1715257, 1724679, 1734107, 1743543, 1752985, 1762434, 1771889, 1781351, 1790820, 1800295, 1809777, 1819266,
	1828760, 1838262, 1847770, 1857284, 1866805, 1876332, 1885865, 1895405, 1904951, 1914503, 1924062, 1933627,
	1943197, 1952774, 1962358, 1971947, 1981542, 1991144, 2000751, 2010365, 2019984, 2029609, 2039241, 2048878,
	2058521, 2068170, 2077825, 2087486, 2097152,
}
