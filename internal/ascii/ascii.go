// Package ascii keeps output readable where the locale is not UTF-8 (LANG=C,
// POSIX, a bare container): Writer replaces the marks and symbols
// slurmbench prints (✓ ✗ ▲ ▼ → × ± …) by ASCII spellings, so a terminal
// or log that cannot show them shows words instead of mojibake.
package ascii

import (
	"io"
	"strings"
	"unicode/utf8"
)

// UTF8 says whether the locale (LC_ALL, else LC_CTYPE, else LANG) is a
// UTF-8 one. A locale set to another charset (C, POSIX, ISO-8859-1) is
// not; none set at all (a CI runner's or a test's environment, whose logs
// are UTF-8) counts as UTF-8, as Go itself assumes.
func UTF8(getenv func(string) string) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return true
}

// replacer spells each symbol slurmbench prints; any other non-ASCII rune
// (a model or file name) becomes '?'.
var replacer = strings.NewReplacer(
	"✓", "ok", "✅", "ok", "✗", "FAIL", "❌", "FAIL", "❔", "?", "⚠️", "!", "⚠", "!",
	"▲", "^", "▼", "v", "→", "->", "←", "<-", "×", "x", "±", "+/-", "…", "...",
	"—", "-", "–", "-", "−", "-", "≥", ">=", "≤", "<=", "·", ".", "█", "#", "░", ".", "µ", "u",
)

// String is s in ASCII.
func String(s string) string {
	s = replacer.Replace(s)
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Map(func(r rune) rune {
				if r >= utf8.RuneSelf {
					return '?'
				}
				return r
			}, s)
		}
	}
	return s
}

// Writer writes ASCII to w. A rune split across two writes is held until
// its end arrives.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct {
	w    io.Writer
	tail []byte
}

func (a *writer) Write(p []byte) (int, error) {
	b := append(a.tail, p...)
	// Hold back an incomplete rune at the end.
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	a.tail = append([]byte(nil), b[cut:]...)
	if _, err := io.WriteString(a.w, String(string(b[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}
