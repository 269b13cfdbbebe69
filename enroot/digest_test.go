package enroot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// scriptedRunner answers one enroot subcommand itself, the nth call with
// the nth answer (the last one repeats), and hands every other call, and
// the calls whose answer says pass, to the stand-in. It records every
// call's arguments.
type scriptedRunner struct {
	next    Runner
	command string // "digest", "import"
	answers []answer
	calls   *[]string
}

type answer struct {
	output string
	err    error
	file   string // written to the -o path
	pass   bool   // the stand-in runs this call
}

// digestRunner scripts `enroot digest`.
func digestRunner(next Runner, calls *[]string, answers ...answer) scriptedRunner {
	return scriptedRunner{next: next, command: "digest", answers: answers, calls: calls}
}

func (r scriptedRunner) Run(ctx context.Context, cmd Command) error {
	*r.calls = append(*r.calls, strings.Join(cmd.Args, " "))
	if len(cmd.Args) == 0 || cmd.Args[0] != r.command {
		return r.next.Run(ctx, cmd)
	}
	a := r.answers[min(countCalls(*r.calls, r.command), len(r.answers))-1]
	if a.pass {
		return r.next.Run(ctx, cmd)
	}
	if a.file != "" {
		for i, arg := range cmd.Args[:len(cmd.Args)-1] {
			if arg == "-o" {
				if err := os.WriteFile(cmd.Args[i+1], []byte(a.file), 0o644); err != nil {
					return err
				}
			}
		}
	}
	fmt.Fprint(cmd.Stdout, a.output)
	return a.err
}

// countCalls counts the recorded calls of an enroot subcommand.
func countCalls(calls []string, command string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, command+" ") {
			n++
		}
	}
	return n
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
			im.opts.Runner = digestRunner(im.opts.Runner, &calls, answer{output: tc.output, err: tc.err})
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
	serverError := answer{output: "[ERROR] URL https://10.77.0.1:5000/v2/slurmbench/mock-engine/manifests/demo returned error code: 500 Internal Server Error\n", err: exit1}
	ok := answer{output: d + "\n"}
	for _, tc := range []struct {
		name       string
		answers    []answer
		asked      int
		wantDigest string
	}{
		{"500, then the digest", []answer{serverError, ok}, 2, d},
		{"503, 429, then the digest", []answer{
			{output: "[ERROR] URL x returned error code: 503 Service Unavailable\n", err: exit1},
			{output: "[ERROR] URL x returned error code: 429 \n", err: exit1}, ok}, 3, d},
		{"connection refused, then the digest", []answer{{output: "curl: (7) Failed to connect to 10.77.0.1 port 5000\n", err: exit1}, ok}, 2, d},
		{"500 three times: by tag", []answer{serverError}, 3, ""},
		{"404: not asked again", []answer{{output: "[ERROR] URL x returned error code: 404 Not Found\n", err: exit1}, ok}, 1, ""},
		{"401: not asked again", []answer{{output: "[ERROR] URL x returned error code: 401 Unauthorized\n", err: exit1}, ok}, 1, ""},
		{"enroot 3.x: not asked again", []answer{{output: "Usage: enroot COMMAND\n"}, ok}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "10.77.0.1:5000/slurmbench/mock-engine:demo")
			var calls []string
			im := f.importer(t, Options{ResolveDigest: true})
			im.digestBackoff = time.Millisecond
			im.opts.Runner = digestRunner(im.opts.Runner, &calls, tc.answers...)
			res, err := im.Import(context.Background(), f.ref)
			if err != nil || res.Action != ActionImported {
				t.Fatalf("Import: %+v, %v", res, err)
			}
			if asked := countCalls(calls, "digest"); asked != tc.asked {
				t.Errorf("digest asked %d times, want %d (calls %q)", countCalls(calls, "digest"), tc.asked, calls)
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
	im.opts.Runner = digestRunner(im.opts.Runner, &calls,
		answer{output: "[ERROR] URL x returned error code: 502 Bad Gateway\n", err: errors.New("exit status 1")})
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("SIGINT")
	im.opts.Logf = func(format string, args ...any) {
		if strings.Contains(format, "trying again") {
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
