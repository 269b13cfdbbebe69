package enroot

import (
	"errors"
	"strings"
	"testing"
)

func TestSpaceErrorNamesTheFullDirectory(t *testing.T) {
	squash, scratch := t.TempDir(), t.TempDir()
	free0 := map[string]int64{squash: 40 << 20, scratch: 3 << 30}
	for _, tc := range []struct {
		name    string
		dirs    []string
		minFree map[string]int64
		output  string
		want    []string // in the error; nil: no error
	}{
		{"squash dir filled", []string{squash}, map[string]int64{squash: 4096}, "",
			[]string{"no space left in " + squash, "needs more than the 40.0 MiB", "docker://r#i:t"}},
		{"scratch dir filled", []string{squash, scratch}, map[string]int64{squash: 30 << 20, scratch: 0}, "",
			[]string{"no space left in " + scratch, "needs more than the 3.0 GiB"}},
		{"room left everywhere", []string{squash, scratch}, map[string]int64{squash: 30 << 20, scratch: 2 << 30}, "", nil},
		{"free space unknown", []string{squash}, map[string]int64{}, "", nil},
		{"enroot says so, the watch missed it", []string{squash}, map[string]int64{squash: 3 << 20},
			"zstd: error 70 : Write error : cannot write block : No space left on device", []string{"no space left in " + squash, "exit status 1"}},
		{"enroot says so: the fuller directory", []string{squash, scratch}, map[string]int64{squash: 30 << 20, scratch: 2 << 20},
			"tar: ./usr/bin/x: Cannot write: No space left on device", []string{"no space left in " + scratch}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := spaceError(tc.dirs, free0, tc.minFree, tc.output, "docker://r#i:t", errors.New("exit status 1"))
			if tc.want == nil {
				if err != nil {
					t.Errorf("spaceError = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("spaceError = nil")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestWatchSpaceSeesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	low := watchSpace([]string{dir}).stop() // stop looks once more

	if f, ok := low[dir]; !ok || f <= 0 {
		t.Errorf("lowest free space of %s: %d, %v", dir, f, ok)
	}
}
