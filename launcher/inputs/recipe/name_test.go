package recipe

import "testing"

func TestSanitizeName(t *testing.T) {
	long := ""
	for range 20 {
		long += "abcdefghij"
	}
	for _, tt := range []struct{ in, want string }{
		{"GitHub Actions 12", "GitHub-Actions-12"},
		{"b200-dgxc_01", "b200-dgxc_01"},
		{"  .hidden runner  ", "hidden-runner"},
		{"a/b:c@d", "a-b-c-d"},
		{"ünïcode", "n-code"},
		{"---", ""},
		{"", ""},
		{long, long[:128]},
	} {
		got := SanitizeName(tt.in)
		if got != tt.want {
			t.Errorf("SanitizeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got != "" {
			if err := CheckName(got); err != nil {
				t.Errorf("SanitizeName(%q) = %q, which CheckName refuses: %v", tt.in, got, err)
			}
		}
	}
}
