package ascii

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"✓ slurmrestd answers":           "ok slurmrestd answers",
		"✗ partition gpu: DOWN — fix":    "FAIL partition gpu: DOWN - fix",
		"▲ 3.1% ▼ 2.0% 8 × 4 → 32 ± 0.1": "^ 3.1% v 2.0% 8 x 4 -> 32 +/- 0.1",
		"model Ωmega":                    "model ?mega",
		"plain":                          "plain",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriterSplitRunes: a mark split across writes (a pipe's chunks) is
// still replaced, not printed as two broken bytes.
func TestWriterSplitRunes(t *testing.T) {
	var out strings.Builder
	w := Writer(&out)
	msg := []byte("a ✓ b ▲ c\n")
	for i := range msg {
		if _, err := w.Write(msg[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if got := out.String(); got != "a ok b ^ c\n" {
		t.Errorf("byte-by-byte: %q", got)
	}
}

func TestUTF8(t *testing.T) {
	for _, tt := range []struct {
		all, ctype, lang string
		want             bool
	}{
		{"", "", "C", false},
		{"", "", "en_US.UTF-8", true},
		{"C", "", "en_US.UTF-8", false}, // LC_ALL wins
		{"", "en_US.utf8", "C", true},   // then LC_CTYPE
		{"", "", "", true},              // unset: as Go assumes
		{"", "", "C.UTF-8", true},
		{"", "", "de_DE.ISO-8859-1", false},
	} {
		env := map[string]string{"LC_ALL": tt.all, "LC_CTYPE": tt.ctype, "LANG": tt.lang}
		if got := UTF8(func(k string) string { return env[k] }); got != tt.want {
			t.Errorf("UTF8(%v) = %v, want %v", env, got, tt.want)
		}
	}
}
