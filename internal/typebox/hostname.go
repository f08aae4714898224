package typebox

import (
	"strings"
	"unicode"
)

// The hostname and idn-hostname formats, with the punycode decoder that
// TypeBox runs on xn-- labels.

func isHostname(s string) bool {
	n := utf16Length(s)
	if n == 0 || n > 253 || strings.HasSuffix(s, ".") {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if !isHostnameLabel(label) {
			return false
		}
	}
	return true
}

func isHostnameLabel(label string) bool {
	if n := utf16Length(label); n == 0 || n > 63 {
		return false
	}
	if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
		// TypeBox then checks the decoded label against the IDNA tables;
		// that part is not ported, any decodable non-ASCII label passes.
		body := strings.ToLower(label[4:])
		decoded, ok := punycodeDecode(body)
		return ok && strings.LastIndexByte(body, '-') != 0 && strings.IndexFunc(decoded, func(r rune) bool { return r >= 0x80 }) >= 0
	}
	return !strings.HasPrefix(label, "-") && !strings.HasSuffix(label, "-") &&
		!(len(label) >= 4 && label[2:4] == "--") && asciiLabelRE.MatchString(label)
}

// punycodeDecode is TypeBox's RFC 3492 decoder, lowercase digits only.
func punycodeDecode(s string) (string, bool) {
	const base, tmin, tmax, maxRune = 36, 1, 26, 0x10FFFF
	var out []rune
	delim := strings.LastIndexByte(s, '-')
	for j := 0; j < delim; j++ {
		if s[j] >= 0x80 {
			return "", false
		}
		out = append(out, rune(s[j]))
	}
	n, i, bias := 128, 0, 72
	for in := delim + 1; in < len(s); {
		oldi, w := i, 1
		for k := base; ; k += base {
			if in >= len(s) {
				return "", false
			}
			ch := s[in]
			in++
			var digit int
			switch {
			case 'a' <= ch && ch <= 'z':
				digit = int(ch - 'a')
			case '0' <= ch && ch <= '9':
				digit = int(ch-'0') + 26
			default:
				return "", false
			}
			i += digit * w
			if i > (maxRune+1)*(len(out)+1) {
				// n would pass the last code point: fromCodePoint throws.
				return "", false
			}
			t := k - bias
			if k <= bias {
				t = tmin
			} else if k >= bias+tmax {
				t = tmax
			}
			if digit < t {
				break
			}
			w *= base - t
		}
		size := len(out) + 1
		bias = punycodeAdapt(i-oldi, size, oldi == 0)
		n += i / size
		i %= size
		if n > maxRune {
			return "", false
		}
		out = append(out[:i], append([]rune{rune(n)}, out[i:]...)...)
		i++
	}
	return string(out), true
}

func punycodeAdapt(delta, points int, first bool) int {
	if first {
		delta /= 700
	} else {
		delta >>= 1
	}
	delta += delta / points
	k := 0
	for delta > (36-1)*26/2 {
		delta /= 36 - 1
		k += 36
	}
	return k + (36-1+1)*delta/(delta+38)
}

// isIdnHostname approximates TypeBox's IDNA check: labels of letters,
// digits and hyphens, with the ASCII rules for ASCII labels.
func isIdnHostname(s string) bool {
	if s == "" || strings.Contains(s, " ") {
		return false
	}
	normalized := strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".").Replace(s)
	if utf16Length(normalized) > 253 {
		return false
	}
	for _, label := range strings.Split(normalized, ".") {
		if n := utf16Length(label); n == 0 || n > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, r := range label {
			if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.M, r) {
				return false
			}
		}
	}
	return true
}
