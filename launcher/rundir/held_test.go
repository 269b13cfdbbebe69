package rundir

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRequestQueue: requests come out in queueing order, whatever their
// run ids; a taken request leaves the queue; unfinished writes (atomic
// temporaries) and the taken/ folder are not requests.
func TestRequestQueue(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 12, 3, 1, 2, 3, 0, time.UTC)
	for i, id := range []string{"zz-first", "aa-second", "mm-third"} {
		if _, err := QueueRequest(root, Request{RunID: id, Plan: "/runs/" + id + "/plan.json", Queued: t0.Add(time.Duration(i) * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(RequestsDir(root), ".tmp-123.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	queue, err := PendingRequests(root)
	if err != nil || len(queue) != 3 {
		t.Fatalf("queue %v, %v; want three requests", queue, err)
	}
	for _, want := range []string{"zz-first", "aa-second", "mm-third"} {
		queue, _ := PendingRequests(root)
		req, err := TakeRequest(queue[0])
		if err != nil || req.RunID != want || req.Plan != "/runs/"+want+"/plan.json" {
			t.Fatalf("took %+v, %v; want %s", req, err, want)
		}
	}
	if queue, _ := PendingRequests(root); len(queue) != 0 {
		t.Errorf("queue after taking all: %v", queue)
	}
	if _, err := QueueRequest(root, Request{RunID: "x", Plan: "relative/plan.json"}); err == nil {
		t.Error("a request with a relative plan path was queued")
	}
	if DownRequested(root) {
		t.Error("down requested before RequestDown")
	}
	if err := RequestDown(root); err != nil || !DownRequested(root) {
		t.Errorf("RequestDown: %v", err)
	}
}
