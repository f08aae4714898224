package tools

import "unicode/utf8"

// utf8Decoder decodes a byte stream as the WHATWG Encoding Standard's UTF-8
// decoder does, which is what pi's tools get from Node's TextDecoder: each
// maximal ill-formed subsequence becomes one U+FFFD ("\xff\xfe" is two,
// an incomplete "\xe2\x82" is one), and a sequence split across writes is
// decoded whole. Go's strings.ToValidUTF8 replaces a run of bad bytes with
// a single U+FFFD, so pi's byte counts and notices would differ.
type utf8Decoder struct {
	cp           rune
	seen, needed int
	lower, upper byte
}

// decode appends the decoded text of b to dst. A sequence still incomplete
// at the end of b waits for the next call (or flush).
func (d *utf8Decoder) decode(dst, b []byte) []byte {
	if d.lower == 0 {
		d.lower, d.upper = 0x80, 0xBF
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if d.needed == 0 {
			switch {
			case c < 0x80:
				dst = append(dst, c)
			case c >= 0xC2 && c <= 0xDF:
				d.needed, d.cp = 1, rune(c&0x1F)
			case c >= 0xE0 && c <= 0xEF:
				if c == 0xE0 {
					d.lower = 0xA0
				} else if c == 0xED {
					d.upper = 0x9F
				}
				d.needed, d.cp = 2, rune(c&0x0F)
			case c >= 0xF0 && c <= 0xF4:
				if c == 0xF0 {
					d.lower = 0x90
				} else if c == 0xF4 {
					d.upper = 0x8F
				}
				d.needed, d.cp = 3, rune(c&0x07)
			default:
				dst = utf8.AppendRune(dst, utf8.RuneError)
			}
			continue
		}
		if c < d.lower || c > d.upper {
			// The sequence ends before this byte, which starts afresh.
			d.reset()
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i--
			continue
		}
		d.lower, d.upper = 0x80, 0xBF
		d.cp = d.cp<<6 | rune(c&0x3F)
		if d.seen++; d.seen == d.needed {
			dst = utf8.AppendRune(dst, d.cp)
			d.reset()
		}
	}
	return dst
}

// flush ends the stream: an incomplete sequence becomes one U+FFFD.
func (d *utf8Decoder) flush(dst []byte) []byte {
	if d.needed != 0 {
		d.reset()
		dst = utf8.AppendRune(dst, utf8.RuneError)
	}
	return dst
}

func (d *utf8Decoder) reset() {
	d.cp, d.seen, d.needed = 0, 0, 0
	d.lower, d.upper = 0x80, 0xBF
}
