package enroot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// digestRunner answers `enroot digest` itself, the nth time with the nth
// answer (the last one repeats), and hands every other call to the
// stand-in.
type digestRunner struct {
	next    Runner
	answers []digestAnswer
	calls   *[]string
}

type digestAnswer struct {
	output string
	err    error
}

func (r digestRunner) Run(ctx context.Context, cmd Command) error {
	*r.calls = append(*r.calls, strings.Join(cmd.Args, " "))
	if len(cmd.Args) > 0 && cmd.Args[0] == "digest" {
		n := 0
		for _, c := range *r.calls {
			if strings.HasPrefix(c, "digest ") {
				n++
			}
		}
		a := r.answers[min(n, len(r.answers))-1]
		fmt.Fprint(cmd.Stdout, a.output)
		return a.err
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
			im.opts.Runner = digestRunner{next: im.opts.Runner, answers: []digestAnswer{{tc.output, tc.err}}, calls: &calls}
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

// TestDigestAskedAgainAfterARegistryFailure: a registry failure that may
// pass (a 5xx, a timeout, throttling, a dropped connection) is asked about
// again, up to three times; any other failure is not, and the import then
// goes by tag.
func TestDigestAskedAgainAfterARegistryFailure(t *testing.T) {
	const d = "sha256:4f1f3b6a0c8b2e8d2e54a1c0f6b0a52b1b5d4a14f3f0f7c5e7d2a0d1b3c4e5f6"
	exit1 := errors.New("exit status 1")
	serverError := digestAnswer{"[ERROR] URL https://10.77.0.1:5000/v2/slurmbench/mock-engine/manifests/demo returned error code: 500 Internal Server Error\n", exit1}
	ok := digestAnswer{d + "\n", nil}
	for _, tc := range []struct {
		name       string
		answers    []digestAnswer
		asked      int
		wantDigest string
	}{
		{"500, then the digest", []digestAnswer{serverError, ok}, 2, d},
		{"503, 429, then the digest", []digestAnswer{
			{"[ERROR] URL x returned error code: 503 Service Unavailable\n", exit1},
			{"[ERROR] URL x returned error code: 429 \n", exit1}, ok}, 3, d},
		{"connection refused, then the digest", []digestAnswer{{"curl: (7) Failed to connect to 10.77.0.1 port 5000\n", exit1}, ok}, 2, d},
		{"500 three times: by tag", []digestAnswer{serverError}, 3, ""},
		{"404: not asked again", []digestAnswer{{"[ERROR] URL x returned error code: 404 Not Found\n", exit1}, ok}, 1, ""},
		{"401: not asked again", []digestAnswer{{"[ERROR] URL x returned error code: 401 Unauthorized\n", exit1}, ok}, 1, ""},
		{"enroot 3.x: not asked again", []digestAnswer{{"Usage: enroot COMMAND\n", nil}, ok}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "10.77.0.1:5000/slurmbench/mock-engine:demo")
			var calls []string
			im := f.importer(t, Options{ResolveDigest: true})
			im.digestBackoff = time.Millisecond
			im.opts.Runner = digestRunner{next: im.opts.Runner, answers: tc.answers, calls: &calls}
			res, err := im.Import(context.Background(), f.ref)
			if err != nil || res.Action != ActionImported {
				t.Fatalf("Import: %+v, %v", res, err)
			}
			asked := 0
			for _, c := range calls {
				if strings.HasPrefix(c, "digest ") {
					asked++
				}
			}
			if asked != tc.asked {
				t.Errorf("digest asked %d times, want %d (calls %q)", asked, tc.asked, calls)
			}
			if m := f.checkSidecar(t, OriginImported); m.Digest != tc.wantDigest {
				t.Errorf("sidecar digest %q, want %q", m.Digest, tc.wantDigest)
			}
		})
	}
}

// TestDigestRetryStopsOnCancel: an interrupt during the wait between two
// attempts ends the import at once, with the interrupt's cause.
func TestDigestRetryStopsOnCancel(t *testing.T) {
	f := newFixture(t, "10.77.0.1:5000/slurmbench/mock-engine:demo")
	var calls []string
	im := f.importer(t, Options{ResolveDigest: true})
	im.digestBackoff = time.Hour
	im.opts.Runner = digestRunner{next: im.opts.Runner, calls: &calls,
		answers: []digestAnswer{{"[ERROR] URL x returned error code: 502 Bad Gateway\n", errors.New("exit status 1")}}}
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("SIGINT")
	im.opts.Logf = func(format string, args ...any) {
		if strings.HasPrefix(format, "registry failure") {
			cancel(stop) // the first failure has been reported: now in the wait
		}
	}
	_, err := im.Import(ctx, f.ref)
	if !errors.Is(err, stop) {
		t.Fatalf("Import = %v, want the interrupt's cause", err)
	}
	if len(calls) != 1 {
		t.Errorf("calls %q, want the one digest call and no import", calls)
	}
}
