package sabench

import (
	"math"
	"slices"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/clients/sabench/numpy"
)

// Expected draws were printed by numpy 1.24 after np.random.seed(0):
//
//	il = np.random.randint(int(isl*0.8), isl+1, size=n).tolist()
//	ol = np.random.randint(int(osl*0.8), osl+1, size=n).tolist()
//	off = np.random.randint(0, vocab, size=n).tolist()

func TestDatasetMatchesNumpySeed0(t *testing.T) {
	d, err := NewDataset(DatasetOptions{InputLen: 64, OutputLen: 32, RangeRatio: 0.8, NumPrompts: 80})
	if err != nil {
		t.Fatal(err)
	}
	wantIn := []int{63, 56, 51, 54, 62, 54, 58, 60, 54, 56, 53, 55, 58, 57, 59, 59, 63, 61, 52, 57, 58, 58, 59, 52, 56, 60, 64, 59, 60, 55, 54, 51, 54, 56, 51, 53, 54, 59, 52, 54, 64, 54, 54, 58, 51, 52, 60, 60, 51, 61, 55, 58, 54, 62, 53, 58, 63, 53, 51, 51, 55, 56, 56, 57, 59, 55, 52, 55, 60, 61, 61, 59, 52, 52, 58, 60, 60, 54, 57, 58}
	wantOut := []int{28, 31, 27, 28, 25, 31, 28, 30, 29, 26, 27, 29, 28, 29, 31, 29, 32, 32, 29, 28, 29, 29, 29, 25, 31, 32, 29, 28, 27, 32, 32, 30, 30, 30, 25, 26, 30, 26, 28, 25, 32, 30, 31, 25, 26, 27, 29, 27, 25, 30, 28, 27, 27, 30, 25, 32, 30, 26, 32, 25, 27, 27, 28, 27, 32, 32, 28, 27, 26, 27, 31, 28, 31, 28, 28, 27, 31, 28, 29, 26}
	wantOff := []int64{18994, 5531, 23310, 31785, 31802, 15041, 23588, 23306, 4182, 15403}
	if !slices.Equal(d.InputLens, wantIn) {
		t.Errorf("input lengths = %v\nnumpy draws   %v", d.InputLens, wantIn)
	}
	if !slices.Equal(d.OutputLens, wantOut) {
		t.Errorf("output lengths = %v\nnumpy draws    %v", d.OutputLens, wantOut)
	}
	if !slices.Equal(d.Offsets[:10], wantOff) {
		t.Errorf("offsets = %v, numpy draws %v", d.Offsets[:10], wantOff)
	}
	if got := sum(d.OutputLens); got != 2282 {
		t.Errorf("Σ output lengths = %d, numpy 2282", got)
	}
}

func TestDatasetLargeMatchesNumpy(t *testing.T) {
	// An 8k/1k point at c2048 with DeepSeek's vocabulary: 20480 prompts.
	d, err := NewDataset(DatasetOptions{InputLen: 8192, OutputLen: 1024, RangeRatio: 0.8, NumPrompts: 20480, VocabSize: 129280})
	if err != nil {
		t.Fatal(err)
	}
	n := d.Len()
	checks := []struct {
		name      string
		got, want []int64
	}{
		{"sums", []int64{int64(sum(d.InputLens)), int64(sum(d.OutputLens))}, []int64{150983014, 18892166}},
		{"first inputs", ints64(d.InputLens[:5]), []int64{7237, 7112, 7769, 7388, 7316}},
		{"first outputs", ints64(d.OutputLens[:5]), []int64{848, 975, 905, 820, 944}},
		{"first offsets", d.Offsets[:5], []int64{124163, 124475, 73115, 60115, 117539}},
		{"last inputs", ints64(d.InputLens[n-3:]), []int64{7278, 7294, 6942}},
		{"last outputs", ints64(d.OutputLens[n-3:]), []int64{853, 983, 912}},
		{"last offsets", d.Offsets[n-3:], []int64{799, 83279, 78320}},
	}
	for _, c := range checks {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v, numpy %v", c.name, c.got, c.want)
		}
	}
	for i, l := range d.InputLens {
		if l < 6553 || l > 8192 {
			t.Fatalf("input length %d of request %d is outside [int(8192*0.8), 8192]", l, i)
		}
	}
}

func TestDatasetDeterministicAndSeeded(t *testing.T) {
	o := DatasetOptions{InputLen: 1024, OutputLen: 1024, RangeRatio: 0.8, NumPrompts: 500}
	a, _ := NewDataset(o)
	b, _ := NewDataset(o)
	if !slices.Equal(a.InputLens, b.InputLens) || !slices.Equal(a.Offsets, b.Offsets) {
		t.Fatal("two draws with seed 0 differ")
	}
	o.Seed = 1
	c, _ := NewDataset(o)
	if slices.Equal(a.InputLens, c.InputLens) {
		t.Fatal("seed 1 gives the same lengths as seed 0")
	}
	// Ratio 1 is a one-value range: numpy draws nothing for it, so the
	// offsets come first in the stream.
	one, _ := NewDataset(DatasetOptions{InputLen: 8, OutputLen: 4, RangeRatio: 1, NumPrompts: 3})
	if !slices.Equal(one.InputLens, []int{8, 8, 8}) || !slices.Equal(one.OutputLens, []int{4, 4, 4}) {
		t.Fatalf("ratio 1 lengths = %v/%v, want all 8/4", one.InputLens, one.OutputLens)
	}
}

func TestAppendPrompt(t *testing.T) {
	d := &Dataset{InputLens: []int{3, 4}, OutputLens: []int{1, 1}, Offsets: []int64{5, 8}, VocabSize: 10}
	// Request i: (offset_i + i + j) % vocab.
	if got := string(d.AppendPrompt(nil, 0)); got != "[5,6,7]" {
		t.Errorf("prompt 0 = %s, want [5,6,7]", got)
	}
	if got := string(d.AppendPrompt(nil, 1)); got != "[9,0,1,2]" {
		t.Errorf("prompt 1 = %s, want [9,0,1,2] (wraps at the vocabulary)", got)
	}
}

func TestDatasetOptionsRejected(t *testing.T) {
	for _, o := range []DatasetOptions{
		{InputLen: 0, OutputLen: 8, RangeRatio: 0.8, NumPrompts: 1},
		{InputLen: 8, OutputLen: 8, RangeRatio: 1.5, NumPrompts: 1},
		{InputLen: 8, OutputLen: 8, RangeRatio: 0.8, NumPrompts: 0},
		{InputLen: 1, OutputLen: 8, RangeRatio: 0.5, NumPrompts: 1}, // int(0.5) = 0: empty prompts
	} {
		if _, err := NewDataset(o); err == nil {
			t.Errorf("NewDataset(%+v) accepted", o)
		}
	}
}

func TestGammaMatchesNumpy(t *testing.T) {
	// After the 80-prompt dataset draws, np.random.gamma(shape=1.0, scale=1/(4.0*1.0)) ×5:
	_, rng, err := newDataset(DatasetOptions{InputLen: 64, OutputLen: 32, RangeRatio: 0.8, NumPrompts: 80})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.004844944746162363, 0.08973180412699261, 0.26983004901571, 0.08564990521282685, 0.2405937653101463}
	for i, w := range want {
		assertClose(t, "gamma(1, 0.25) draw "+string(rune('0'+i)), rng.Gamma(1, 0.25), w)
	}
	// np.random.seed(0); np.random.randint(0, 10, size=3); then gamma(0.5, 2.0) ×4
	// and gamma(2.5, 0.1) ×4 exercise the other two branches (and the cached normal).
	r := numpy.NewRandomState(0)
	r.Randint(0, 10, make([]int64, 3))
	want = []float64{2.5501810785857404, 0.8241472828809864, 0.14868290994831493, 1.9583472215112898,
		0.4281050757651122, 0.16800346455977214, 0.28603610231074134, 0.19899675280829715}
	for i, w := range want {
		shape, scale := 0.5, 2.0
		if i >= 4 {
			shape, scale = 2.5, 0.1
		}
		assertClose(t, "gamma draw", r.Gamma(shape, scale), w)
	}
}

func assertClose(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("%s = %v, numpy %v", what, got, want)
	}
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func ints64(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}
