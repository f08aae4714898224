package typebox

import (
	"strings"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

// The hostname and idn-hostname formats. TypeBox (typebox/build/format/idna)
// checks the shape of a name itself and each internationalized label with
// its own IDNA2008 tables: disallowed code points, contextual rules, the
// bidi rule. Those tables are what golang.org/x/net/idna's registration
// profile checks, so labels go through it; the shape rules stay TypeBox's.

// registration validates an internationalized label with IDNA2008's
// tables, hyphen, joiner and bidi rules. Case is mapped first: TypeBox
// accepts upper-case letters.
var registration = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.CheckJoiners(true), idna.CheckHyphens(true))

// punycode decodes an A-label without validating what it decodes to.
var punycode = idna.New()

// isHostname is TypeBox's: labels of ASCII letters, digits and hyphens,
// or A-labels (xn--) that decode to a valid internationalized label.
func isHostname(s string) bool {
	n := jsjson.LengthUTF16(s)
	if n == 0 || n > 253 || strings.HasSuffix(s, ".") {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if n := jsjson.LengthUTF16(label); n == 0 || n > 63 || !(isPunyLabel(label) || isASCIILabel(label)) {
			return false
		}
	}
	return true
}

func isASCIILabel(label string) bool {
	return !strings.HasPrefix(label, "-") && !strings.HasSuffix(label, "-") &&
		!(len(label) >= 4 && label[2:4] == "--") && asciiLabelRE.MatchString(label)
}

// isPunyLabel is TypeBox's IsPunyLabel: an xn-- label, in any case, whose
// body decodes to something not all ASCII that is a valid label itself.
func isPunyLabel(label string) bool {
	if len(label) < 4 || !strings.EqualFold(label[:4], "xn--") {
		return false
	}
	body := strings.ToLower(label[4:])
	if strings.LastIndexByte(body, '-') == 0 {
		return false
	}
	decoded, err := punycode.ToUnicode("xn--" + body)
	if err != nil || !hasNonASCII(decoded) {
		return false
	}
	return isUnicodeLabel(decoded)
}

// isUnicodeLabel is TypeBox's IsUnicodeLabel. Under UTS 46 x/net/idna
// lets symbols and punctuation through (emoji, U+2010), which TypeBox's
// permitted categories refuse. TypeBox also checks the context of the
// CONTEXTO characters (a middle dot between two l's, say); that rule is not
// ported, they pass anywhere.
func isUnicodeLabel(label string) bool {
	runes := []rune(label)
	if len(runes) >= 4 && runes[2] == '-' && runes[3] == '-' {
		return false // this includes xn--, which x/net exempts
	}
	for _, r := range runes {
		if r != '-' && !strings.ContainsRune(contextO, r) && unicode.In(r, unicode.S, unicode.P) {
			return false
		}
	}
	_, err := registration.ToASCII(label)
	return err == nil
}

// contextO are the punctuation and symbols RFC 5892 permits in context.
const contextO = "\u00b7\u0375\u05f3\u05f4\u30fb"

func hasNonASCII(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 }) >= 0
}

// hostnameMapping is TypeBox's NormalizeHostname before and after NFC:
// fullwidth ASCII to ASCII, ignored code points removed, and the four full
// stops to ".".
var (
	fullwidthMapping = strings.NewReplacer(fullwidthPairs()...)
	ignoredMapping   = strings.NewReplacer(ignoredPairs()...)
	fullStopMapping  = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".")
)

func fullwidthPairs() []string {
	var pairs []string
	for r := rune(0xff01); r <= 0xff5e; r++ {
		pairs = append(pairs, string(r), string(r-0xfee0))
	}
	return pairs
}

func ignoredPairs() []string {
	pairs := []string{"\u00ad", "", "\u034f", "", "\u200b", ""}
	for _, span := range [][2]rune{{0x180b, 0x180d}, {0xfe00, 0xfe0f}, {0xe0100, 0xe01ef}} {
		for r := span[0]; r <= span[1]; r++ {
			pairs = append(pairs, string(r), "")
		}
	}
	return pairs
}

// isIdnHostname is TypeBox's IsIdnHostname: the name normalized, then every
// label an A-label or a valid internationalized label; when any label
// holds right-to-left characters, every label must satisfy the bidi rule,
// which the registration profile checks across the whole name.
func isIdnHostname(s string) bool {
	if s == "" || strings.Contains(s, " ") {
		return false
	}
	normalized := fullStopMapping.Replace(ignoredMapping.Replace(norm.NFC.String(fullwidthMapping.Replace(s))))
	if jsjson.LengthUTF16(normalized) > 253 {
		return false
	}
	for _, label := range strings.Split(normalized, ".") {
		if n := jsjson.LengthUTF16(label); n == 0 || n > 63 || !(isPunyLabel(label) || isUnicodeLabel(label)) {
			return false
		}
	}
	_, err := registration.ToASCII(normalized)
	return err == nil
}
