package recipe

import "strings"

// SanitizeName turns free text (a CI runner's name such as "GitHub Actions
// 12", a branch) into a name CheckName accepts: each run of other
// characters becomes one '-', leading '.' and '-' go, and it is cut to 128
// bytes. It returns "" when nothing usable is left.
func SanitizeName(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-+", c) {
			b.WriteRune(c)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimLeft(b.String(), ".-")
	if len(out) > 128 {
		out = out[:128]
	}
	return strings.TrimRight(out, "-")
}
