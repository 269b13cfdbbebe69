package gsm8k

import "testing"

// Expected values from lm-eval's RegexFilter (findall, group_select -1,
// tuple → first non-empty group, strip, fallback "[invalid]") and
// exact_match_hf_evaluate with the gsm8k task's settings, in Python:
//
//	import re
//	STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")
//	FLEX = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
//	IGN = [",", "\\$", "(?s).*#### ", "\\.$"]
//	def filt(rx, resp):
//	    m = rx.findall(resp)
//	    if not m: return "[invalid]"
//	    m = m[-1]
//	    if isinstance(m, tuple): m = [x for x in m if x][0]
//	    return m.strip()
//	def norm(s):
//	    for p in IGN: s = re.sub(p, "", s)
//	    return s.lower()
//	# row: resp, gold, filt(STRICT), filt(FLEX), float(norm(strict) == norm(gold)), float(norm(flex) == norm(gold))
func TestFiltersAndExactMatchMatchLMEval(t *testing.T) {
	tests := []struct {
		resp, gold       string
		strict, flexible string
		emStrict, emFlex float64
	}{
		{"#### 18", "#### 18", "18", "18", 1, 1},
		{"She makes $18 a day.\n#### 18", "#### 18", "18", "18", 1, 1},
		{"The answer is 1,234.", "#### 1234", "[invalid]", "1,234.", 0, 1},
		{"#### 1,234.", "#### 1234", "1,234.", "1,234.", 1, 1},
		{"Total: $70,000\n#### $70,000", "#### 70000", "[invalid]", "$70,000", 0, 1},
		{"#### -5", "#### -5", "-5", "-5", 1, 1},
		{"It drops to -5 degrees.", "#### -5", "[invalid]", "-5", 0, 1},
		{"First 12 then 7", "#### 7", "[invalid]", "7", 0, 1},
		{"#### 3 and later #### 4", "#### 3", "4", "4", 0, 0},
		{"#### 3.50", "#### 3.5", "3.50", "3.50", 0, 0},
		{"no digits here", "#### 1", "[invalid]", "[invalid]", 0, 0},
		{"5", "#### 5", "[invalid]", "5", 0, 1},
		{"the value 5.\n", "#### 5", "[invalid]", "5.", 0, 1},
		{"#### 18\n", "#### 18", "18", "18", 1, 1},
		{"$.", "#### 0", "[invalid]", "$.", 0, 0},
		{"answer: 8.0", "#### 8", "[invalid]", "8.0", 0, 0},
		{"#### 2,125", "#### 2,125", "2,125", "2,125", 1, 1},
		{"ratio 3.5.", "#### 3.5", "[invalid]", "3.5.", 0, 1},
	}
	s, err := NewScorer(InferenceXTask())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		strict, flexible := s.Filter(FilterStrict, tt.resp), s.Filter(FilterFlexible, tt.resp)
		if strict != tt.strict || flexible != tt.flexible {
			t.Errorf("filters(%q) = strict %q, flexible %q; want %q, %q", tt.resp, strict, flexible, tt.strict, tt.flexible)
		}
		if got := s.ExactMatch(strict, tt.gold); got != tt.emStrict {
			t.Errorf("exact_match(%q, %q) = %v, want %v", strict, tt.gold, got, tt.emStrict)
		}
		if got := s.ExactMatch(flexible, tt.gold); got != tt.emFlex {
			t.Errorf("exact_match(%q, %q) = %v, want %v", flexible, tt.gold, got, tt.emFlex)
		}
	}
}

// Python's "$" also matches before a final newline; norm() from the snippet
// above gives these.
func TestNormalizeFollowsPythonDollar(t *testing.T) {
	tests := []struct{ in, want string }{
		{"5.\n", "5\n"},
		{"5.", "5"},
		{"a.\n.", "a.\n"},
		{"$1,000.00", "1000.00"},
		{"Foo #### BAR.", "bar"},
		{"x #### y\n#### Z", "z"},
		{"5..", "5."},
		{"\n5.\n\n", "\n5.\n\n"},
	}
	s, err := NewScorer(InferenceXTask())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		if got := s.Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEndsWithAnchor(t *testing.T) {
	for p, want := range map[string]bool{`\.$`: true, `\$`: false, `\\$`: true, `a`: false, `$`: true} {
		if got := endsWithAnchor(p); got != want {
			t.Errorf("endsWithAnchor(%q) = %v, want %v", p, got, want)
		}
	}
}
