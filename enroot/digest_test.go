package enroot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// digestRunner answers `enroot digest` itself and hands every other call
// to the stand-in.
type digestRunner struct {
	next   Runner
	output string
	err    error
	calls  *[]string
}

func (r digestRunner) Run(ctx context.Context, cmd Command) error {
	*r.calls = append(*r.calls, strings.Join(cmd.Args, " "))
	if len(cmd.Args) > 0 && cmd.Args[0] == "digest" {
		fmt.Fprint(cmd.Stdout, r.output)
		return r.err
	}
	return r.next.Run(ctx, cmd)
}

func TestImportResolvesTheTagToADigest(t *testing.T) {
	const d = "sha256:4f1f3b6a0c8b2e8d2e54a1c0f6b0a52b1b5d4a14f3f0f7c5e7d2a0d1b3c4e5f6"
	for _, tc := range []struct {
		name, ref, output string
		err               error
		wantURI           string // the URI enroot import got
		wantDigest        string // in the sidecar
		wantDigestCall    bool
	}{
		{name: "tag resolved", ref: "10.77.17.1:5000/slurmbench/mock-engine:demo",
			output: "[INFO] Fetching image manifest\n" + d + "\n", wantURI: "docker://10.77.17.1:5000#slurmbench/mock-engine:" + d, wantDigest: d, wantDigestCall: true},
		{name: "log lines around it (a job's output)", ref: "nvcr.io/nvidia/sglang:0.5",
			output: "slurmstepd: info\n" + d + "\nsrun: done\n", wantURI: "docker://nvcr.io#nvidia/sglang:" + d, wantDigest: d, wantDigestCall: true},
		{name: "enroot 3.x: usage, no digest", ref: "nvcr.io/nvidia/sglang:0.5",
			output: "Usage: enroot COMMAND\n", wantURI: "docker://nvcr.io#nvidia/sglang:0.5", wantDigestCall: true},
		{name: "digest fails", ref: "nvcr.io/nvidia/sglang:0.5", output: "[ERROR] URL returned error: 404\n", err: errors.New("exit status 1"),
			wantURI: "docker://nvcr.io#nvidia/sglang:0.5", wantDigestCall: true},
		{name: "pinned: no lookup", ref: "nvcr.io/nvidia/sglang:0.5@" + d,
			wantURI: "docker://nvcr.io#nvidia/sglang:" + d, wantDigest: d},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.ref)
			var calls []string
			im := f.importer(t, Options{ResolveDigest: true})
			im.opts.Runner = digestRunner{next: im.opts.Runner, output: tc.output, err: tc.err, calls: &calls}
			res, err := im.Import(context.Background(), f.ref)
			if err != nil || res.Action != ActionImported {
				t.Fatalf("Import: %+v, %v", res, err)
			}
			if got := len(calls) > 0 && strings.HasPrefix(calls[0], "digest "); got != tc.wantDigestCall {
				t.Errorf("digest asked: %v, want %v (calls %q)", got, tc.wantDigestCall, calls)
			}
			last := calls[len(calls)-1]
			if !strings.HasPrefix(last, "import ") || !strings.HasSuffix(last, " "+tc.wantURI) {
				t.Errorf("import call %q, want it to end in %s", last, tc.wantURI)
			}
			m := f.checkSidecar(t, OriginImported)
			if m.Digest != tc.wantDigest {
				t.Errorf("sidecar digest %q, want %q", m.Digest, tc.wantDigest)
			}
		})
	}
}

func TestResolveDigestRefusesALocalSquash(t *testing.T) {
	f := newFixture(t, "nvcr.io/nvidia/sglang:0.5")
	im := f.importer(t, Options{})
	ref, err := ParseRef("/images/x.sqsh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := im.ResolveDigest(context.Background(), ref); err == nil || !strings.Contains(err.Error(), "/images/x.sqsh") {
		t.Errorf("ResolveDigest(local) = %v", err)
	}
}
