package gsm8k

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The expected values below come from CPython 3.11.7 (random.py unchanged in
// this respect through 3.13). Re-run with:
//
//	python3 - <<'EOF'
//	import random, hashlib
//	r = random.Random(1234); print([r.getrandbits(32) for _ in range(5)])
//	r = random.Random(1234); print([r.getrandbits(k) for k in (1, 7, 31, 33, 64)])
//	r = random.Random(1234); print([r.sample(range(7473), 5) for _ in range(3)])
//	r = random.Random(0); print(r.sample(range(10), 10), r.sample(range(21), 3))
//	r = random.Random(2**40 + 7); print(r.sample(range(100), 30))
//	r = random.Random(0); print(r.sample(range(4), 4), r.sample(range(21), 5), r.sample(range(22), 5))
//	print(random.Random(99).sample(range(277), 50), random.Random(99).sample(range(278), 50))
//	r = random.Random(-5); print(r.sample(range(1000), 6))
//	r = random.Random(1234); plan = [r.sample(range(7473), 5) for _ in range(1319)]
//	s = "\n".join(",".join(map(str, p)) for p in plan)
//	print(hashlib.sha256(s.encode()).hexdigest(), plan[-1])
//	EOF

func TestPyRandomGetRandBitsMatchesCPython(t *testing.T) {
	r := NewPyRandom(1234)
	var got []uint64
	for range 5 {
		got = append(got, r.GetRandBits(32))
	}
	if want := []uint64{4150886329, 3342196574, 1892932127, 501869158, 32175636}; !slices.Equal(got, want) {
		t.Errorf("getrandbits(32)×5 = %v, want %v", got, want)
	}

	r = NewPyRandom(1234)
	got = got[:0]
	for _, k := range []int{1, 7, 31, 33, 64} {
		got = append(got, r.GetRandBits(k))
	}
	if want := []uint64{1, 99, 946466063, 501869158, 16804540376168033093}; !slices.Equal(got, want) {
		t.Errorf("getrandbits(1,7,31,33,64) = %v, want %v", got, want)
	}
}

func TestPyRandomSampleMatchesCPython(t *testing.T) {
	tests := []struct {
		name string
		seed int64
		n, k []int // successive sample(range(n[i]), k[i]) calls on one generator
		want [][]int
	}{
		{
			// n > setsize: the set-based branch, lm-eval's few-shot draw.
			name: "gsm8k few-shot draws",
			seed: 1234, n: []int{7473, 7473, 7473}, k: []int{5, 5, 5},
			want: [][]int{{6374, 3610, 957, 61, 742}, {7462, 6610, 4769, 286, 5501}, {5677, 687, 806, 6279, 2905}},
		},
		{
			// n <= 21: the pool branch, including a full permutation.
			name: "pool branch, seed 0",
			seed: 0, n: []int{10, 21}, k: []int{10, 3},
			want: [][]int{{6, 9, 0, 2, 4, 3, 5, 1, 8, 7}, {18, 6, 16}},
		},
		{
			// k > 5 grows setsize to 21+4^ceil(log4(3k)); n=100 stays in the pool branch.
			name: "seed wider than 32 bits",
			seed: 1<<40 + 7, n: []int{100}, k: []int{30},
			want: [][]int{{78, 95, 81, 73, 90, 60, 32, 99, 16, 66, 48, 98, 46, 50, 56, 57, 47, 28, 85, 76, 23, 17, 67, 96, 20, 4, 93, 9, 83, 92}},
		},
		{
			// Pool swaps show in a full draw of 4; n=21 is the last pool size for k<=5, n=22 the first set size.
			name: "branch boundary at setsize 21",
			seed: 0, n: []int{4, 21, 22}, k: []int{4, 5, 5},
			want: [][]int{{3, 1, 0, 2}, {16, 15, 12, 9, 19}, {11, 18, 6, 16, 4}},
		},
		{
			// k=50: setsize = 21 + 4^ceil(log4(150)) = 277, so n=277 pools and n=278 uses the set.
			name: "branch boundary at setsize 277",
			seed: 99, n: []int{277}, k: []int{50},
			want: [][]int{{206, 194, 102, 91, 117, 127, 68, 44, 128, 196, 45, 250, 274, 215, 110, 191, 198, 108, 77, 236, 273, 173, 21, 242, 183, 135, 255, 260, 22, 120, 80, 103, 10, 270, 142, 1, 259, 52, 92, 136, 20, 118, 132, 230, 50, 155, 235, 13, 256, 33}},
		},
		{
			name: "set branch just above setsize 277",
			seed: 99, n: []int{278}, k: []int{50},
			want: [][]int{{206, 194, 102, 91, 117, 127, 68, 44, 128, 196, 271, 275, 45, 250, 215, 110, 191, 198, 108, 77, 236, 173, 42, 270, 240, 161, 21, 137, 3, 217, 104, 185, 273, 41, 265, 101, 26, 183, 66, 82, 226, 90, 257, 18, 56, 11, 87, 242, 214, 73}},
		},
		{
			name: "negative seed uses its absolute value",
			seed: -5, n: []int{1000}, k: []int{6},
			want: [][]int{{637, 261, 759, 367, 814, 707}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewPyRandom(tt.seed)
			for i := range tt.n {
				got, err := r.SampleIndices(tt.n[i], tt.k[i])
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tt.want[i]) {
					t.Errorf("call %d: sample(range(%d), %d) = %v, want %v", i, tt.n[i], tt.k[i], got, tt.want[i])
				}
			}
		})
	}
}

func TestFewshotPlanMatchesCPythonForWholeTestSplit(t *testing.T) {
	pl, err := FewshotPlan(TestDocs, TrainDocs, 5, 1234)
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]string, len(pl))
	for i, p := range pl {
		parts := make([]string, len(p))
		for j, v := range p {
			parts[j] = strconv.Itoa(v)
		}
		lines[i] = strings.Join(parts, ",")
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	if got, want := hex.EncodeToString(sum[:]), "38bd4df0e8fda40c19672652c74b343208531d08a65255af30ed8a0d625f0b5d"; got != want {
		t.Errorf("sha256 of the 1319×5 plan = %s, want %s", got, want)
	}
	if got, want := pl[TestDocs-1], []int{220, 4179, 6064, 5599, 5541}; !slices.Equal(got, want) {
		t.Errorf("last document's shots = %v, want %v", got, want)
	}
}

func TestSampleIndicesRejectsOversizedSample(t *testing.T) {
	if _, err := NewPyRandom(1).SampleIndices(3, 4); err == nil {
		t.Error("sample of 4 from 3: no error")
	}
	if _, err := NewPyRandom(1).SampleIndices(3, -1); err == nil {
		t.Error("sample of -1: no error")
	}
}
