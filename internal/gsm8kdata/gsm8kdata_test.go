package gsm8kdata

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// The README's checksums of the decompressed splits: the built-in data is
// the public data set, unchanged.
func TestEmbeddedSplitsAreThePublicData(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{Test, Train} {
		r, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r.Close()
		sum := hex.EncodeToString(h.Sum(nil))
		if !strings.Contains(string(readme), sum+"  "+name) {
			t.Errorf("%s: sha256 %s is not the README's", name, sum)
		}
	}
	if _, err := Open("validation.jsonl"); err == nil {
		t.Error("an unknown split opened")
	}
}

// The licence shipped is the data set's own.
func TestLicense(t *testing.T) {
	if !strings.HasPrefix(License, "MIT License") || !strings.Contains(License, "Copyright (c) 2021 OpenAI") {
		t.Errorf("embedded LICENSE is not the data set's MIT licence:\n%s", License)
	}
	shared := shareddata.Path(t, "data", "gsm8k", "LICENSE")
	want, err := os.ReadFile(shared)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != License {
		t.Errorf("LICENSE differs from %s", shared)
	}
}
