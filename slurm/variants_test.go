package slurm

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// Hand-made variants of what slurmrestd sends: other versions' shapes,
// missing and extra fields, string vs array states.
func TestDecodeJobVariants(t *testing.T) {
	tests := []struct {
		name string
		json string
		want Job
	}{
		{"state as array with flag", `{"job_id":1,"job_state":["COMPLETED","COMPLETING"]}`,
			Job{ID: 1, State: State{Base: StateCompleted, Flags: []string{"COMPLETING"}}}},
		{"state as string (v0.0.39)", `{"job_id":1,"job_state":"RUNNING"}`,
			Job{ID: 1, State: State{Base: StateRunning}}},
		{"state as plus-joined string", `{"job_id":1,"job_state":"CANCELLED+COMPLETING"}`,
			Job{ID: 1, State: State{Base: StateCancelled, Flags: []string{"COMPLETING"}}}},
		{"flag before base state", `{"job_id":1,"job_state":["COMPLETING","FAILED"]}`,
			Job{ID: 1, State: State{Base: StateFailed, Flags: []string{"COMPLETING"}}}},
		{"lower-case state", `{"job_id":1,"job_state":"timeout"}`,
			Job{ID: 1, State: State{Base: StateTimeout}}},
		{"unknown future base state kept, not terminal", `{"job_id":1,"job_state":["HIBERNATING"]}`,
			Job{ID: 1, State: State{Base: "HIBERNATING"}}},
		{"job id as string", `{"job_id":"42","job_state":["PENDING"]}`,
			Job{ID: 42, State: State{Base: StatePending}}},
		{"job id as noval", `{"job_id":{"set":true,"infinite":false,"number":43},"job_state":["PENDING"]}`,
			Job{ID: 43, State: State{Base: StatePending}}},
		{"missing everything but the id", `{"job_id":7}`, Job{ID: 7}},
		{"extra fields at every level", `{"job_id":8,"job_state":["RUNNING"],"new_thing":{"deep":[1,{"x":null}]},"exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"number":0,"unit":"rc"},"future":1},"node_count":{"set":true,"number":2,"extra":true}}`,
			Job{ID: 8, State: State{Base: StateRunning}, NodeCount: 2, Exit: ExitStatus{Status: []string{"SUCCESS"}}}},
		{"bare numbers (v0.0.39)", `{"job_id":9,"job_state":"COMPLETED","time_limit":30,"node_count":3,"start_time":1796217196,"end_time":1796217200}`,
			Job{ID: 9, State: State{Base: StateCompleted}, TimeLimit: 30 * time.Minute, NodeCount: 3, StartTime: time.Unix(1796217196, 0), EndTime: time.Unix(1796217200, 0)}},
		{"numbers as strings and floats", `{"job_id":10,"time_limit":"15","node_count":2.0}`,
			Job{ID: 10, TimeLimit: 15 * time.Minute, NodeCount: 2}},
		{"infinite and unset numbers", `{"job_id":11,"time_limit":{"set":false,"infinite":true,"number":0},"node_count":{"set":false,"infinite":false,"number":5}}`,
			Job{ID: 11}},
		{"noval without set flag", `{"job_id":12,"time_limit":{"number":20}}`,
			Job{ID: 12, TimeLimit: 20 * time.Minute}},
		{"null fields", `{"job_id":13,"job_state":null,"time_limit":null,"exit_code":null,"gres_detail":null,"comment":null}`,
			Job{ID: 13}},
		{"exit code as wait status 768 (exit 3)", `{"job_id":14,"job_state":"FAILED","exit_code":768}`,
			Job{ID: 14, State: State{Base: StateFailed}, Exit: ExitStatus{Code: 3, Status: []string{"ERROR"}}}},
		{"exit code as wait status 9 (SIGKILL)", `{"job_id":15,"job_state":"CANCELLED","exit_code":{"set":true,"infinite":false,"number":9}}`,
			Job{ID: 15, State: State{Base: StateCancelled}, Exit: ExitStatus{Signal: 9, Status: []string{"SIGNALED"}}}},
		{"signalled exit object (v0.0.40)", `{"job_id":16,"job_state":["CANCELLED"],"exit_code":{"status":["SIGNALED"],"return_code":{"set":false,"infinite":false,"number":0},"signal":{"id":{"set":true,"infinite":false,"number":15},"name":"TERM"}}}`,
			Job{ID: 16, State: State{Base: StateCancelled}, Exit: ExitStatus{Signal: 15, SignalName: "TERM", Status: []string{"SIGNALED"}}}},
		{"gres_detail as string", `{"job_id":17,"gres_detail":"gpu:4(IDX:0-3)"}`,
			Job{ID: 17, GRESDetail: []string{"gpu:4(IDX:0-3)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w wireJob
			if err := json.Unmarshal([]byte(tt.json), &w); err != nil {
				t.Fatalf("decode: %v", err)
			}
			got := w.job()
			tt.want.Source = SourceController
			if !got.State.Equal(tt.want.State) || got.ID != tt.want.ID || got.NodeCount != tt.want.NodeCount ||
				got.TimeLimit != tt.want.TimeLimit || !got.StartTime.Equal(tt.want.StartTime) || !got.EndTime.Equal(tt.want.EndTime) ||
				got.Exit.Code != tt.want.Exit.Code || got.Exit.Signal != tt.want.Exit.Signal || got.Exit.SignalName != tt.want.Exit.SignalName ||
				!slices.Equal(got.Exit.Status, tt.want.Exit.Status) || !slices.Equal(got.GRESDetail, tt.want.GRESDetail) || got.Source != tt.want.Source {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeRejectsGarbage(t *testing.T) {
	for _, in := range []string{`{"job_id":"abc"}`, `{"job_id":{"number":"x"}}`, `{"time_limit":[1]}`, `{"job_state":{"a":1}}`} {
		var w wireJob
		if err := json.Unmarshal([]byte(in), &w); err == nil {
			t.Errorf("%s: decoded without error", in)
		}
	}
}

func TestStateTerminalAndSuccess(t *testing.T) {
	terminal := []BaseState{StateCompleted, StateFailed, StateCancelled, StateTimeout, StateNodeFail, StateOutOfMemory, StatePreempted, StateBootFail, StateDeadline}
	for _, b := range terminal {
		if !b.Terminal() {
			t.Errorf("%s is not terminal", b)
		}
	}
	for _, b := range []BaseState{StatePending, StateRunning, StateSuspended, "", "SOMETHING_NEW"} {
		if b.Terminal() {
			t.Errorf("%q is terminal", b)
		}
	}
	tests := []struct {
		job  Job
		want bool
	}{
		{Job{State: st("COMPLETED"), Exit: ExitStatus{}}, true},
		{Job{State: st("COMPLETED", "COMPLETING")}, true},
		{Job{State: st("COMPLETED"), Exit: ExitStatus{Code: 1}}, false},
		{Job{State: st("COMPLETED"), Exit: ExitStatus{Signal: 9}}, false},
		{Job{State: st("FAILED")}, false},
		{Job{State: st("RUNNING")}, false},
		{Job{}, false},
	}
	for _, tt := range tests {
		if got := tt.job.Success(); got != tt.want {
			t.Errorf("%s %s Success() = %v, want %v", tt.job.State, tt.job.Exit, got, tt.want)
		}
	}
	if got := (Job{State: st("FAILED"), Exit: ExitStatus{Code: 3}, Reason: "NonZeroExitCode"}).Outcome(); got != "FAILED 3:0 (NonZeroExitCode)" {
		t.Errorf("Outcome() = %q", got)
	}
}

func TestStateJSONRoundTrip(t *testing.T) {
	s := State{Base: StateCancelled, Flags: []string{"COMPLETING"}}
	b, err := json.Marshal(s)
	if err != nil || string(b) != `["CANCELLED","COMPLETING"]` {
		t.Fatalf("marshal = %s, %v", b, err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(s) {
		t.Fatalf("round trip = %v, %v", back, err)
	}
}

func TestDecodeAccountingVariants(t *testing.T) {
	tests := []struct {
		name string
		json string
		want Job
	}{
		{"v0.0.41 record", `{"job_id":12,"name":"fail","user":"slurmtest","comment":{"administrator":"","job":"k=1","system":""},"state":{"current":["FAILED"],"reason":"NonZeroExitCode"},"exit_code":{"status":["ERROR"],"return_code":{"set":true,"infinite":false,"number":3},"signal":{"id":{"set":false,"infinite":false,"number":0},"name":""}},"time":{"elapsed":1,"submission":1796217196,"start":1796217196,"end":1796217197,"limit":{"set":true,"infinite":false,"number":5}},"allocation_nodes":1,"nodes":"n1","steps":[{"whatever":true}]}`,
			Job{ID: 12, Name: "fail", User: "slurmtest", Comment: "k=1", State: State{Base: StateFailed}, Reason: "NonZeroExitCode", Exit: ExitStatus{Code: 3}, TimeLimit: 5 * time.Minute, NodeCount: 1, Nodes: "n1"}},
		{"v0.0.39 record: state string, comment string", `{"job_id":"13","state":{"current":"COMPLETED","reason":"None"},"comment":"plain","time":{"limit":60}}`,
			Job{ID: 13, Comment: "plain", State: State{Base: StateCompleted}, Reason: "None", TimeLimit: time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w wireDBJob
			if err := json.Unmarshal([]byte(tt.json), &w); err != nil {
				t.Fatal(err)
			}
			got := w.job()
			tt.want.Source = SourceAccounting
			compareJob(t, got, tt.want)
			if got.Comment != tt.want.Comment {
				t.Errorf("comment = %q, want %q", got.Comment, tt.want.Comment)
			}
		})
	}
}

func TestGRESCount(t *testing.T) {
	tests := []struct {
		gres string
		want int
	}{
		{"gpu:4", 4},
		{"gpu:0", 0},
		{"gpu:h100:8(S:0-1)", 8},
		{"gpu:a100:2,gpu:h100:4", 6},
		{"gpu:4(IDX:0,2-3),nic:1", 4},
		{"gpu:0(IDX:N/A)", 0},
		{"", 0},
		{"(null)", 0},
		{"nic:2", 0},
	}
	for _, tt := range tests {
		if got := gresCount(tt.gres, "gpu"); got != tt.want {
			t.Errorf("gresCount(%q) = %d, want %d", tt.gres, got, tt.want)
		}
	}
}

func TestParseJobID(t *testing.T) {
	if id, err := ParseJobID(" 1234 "); err != nil || id != 1234 {
		t.Errorf("ParseJobID = %d, %v", id, err)
	}
	for _, bad := range []string{"", "0", "-3", "12_3", "12+1", "abc"} {
		if _, err := ParseJobID(bad); err == nil {
			t.Errorf("ParseJobID(%q) accepted", bad)
		}
	}
}
