package slurm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/slurmbench/slurmbench/slurm/wire"
)

// BaseState is a job's base state: the first element of job_state.
type BaseState string

// Base states (Slurm's job_states enum, as slurmrestd spells them).
const (
	StatePending     BaseState = "PENDING"
	StateRunning     BaseState = "RUNNING"
	StateSuspended   BaseState = "SUSPENDED"
	StateCompleted   BaseState = "COMPLETED"
	StateCancelled   BaseState = "CANCELLED"
	StateFailed      BaseState = "FAILED"
	StateTimeout     BaseState = "TIMEOUT"
	StateNodeFail    BaseState = "NODE_FAIL"
	StatePreempted   BaseState = "PREEMPTED"
	StateBootFail    BaseState = "BOOT_FAIL"
	StateDeadline    BaseState = "DEADLINE"
	StateOutOfMemory BaseState = "OUT_OF_MEMORY"
)

// Flags seen next to the base state.
const (
	FlagCompleting  = "COMPLETING"
	FlagConfiguring = "CONFIGURING"
	FlagRequeued    = "REQUEUED"
	FlagSignaling   = "SIGNALING"
)

var baseStates = map[BaseState]bool{
	StatePending: false, StateRunning: false, StateSuspended: false,
	StateCompleted: true, StateCancelled: true, StateFailed: true,
	StateTimeout: true, StateNodeFail: true, StatePreempted: true,
	StateBootFail: true, StateDeadline: true, StateOutOfMemory: true,
}

// Terminal reports whether a job in this base state will not run again.
func (b BaseState) Terminal() bool { return baseStates[b] }

// State is a job's base state plus its flags, e.g. COMPLETED+COMPLETING.
// It only ever holds what slurmrestd sent: there is no "unknown" state.
type State struct {
	Base  BaseState
	Flags []string
}

// ParseState builds a State from job_state elements in any order; the first
// known base state wins and the rest are flags. Old servers send one string
// ("COMPLETED" or "CANCELLED+COMPLETING"), new ones an array.
func ParseState(parts ...string) State {
	var s State
	var rest []string
	for _, p := range parts {
		for _, f := range strings.FieldsFunc(p, func(r rune) bool { return r == ',' || r == '+' || r == ' ' }) {
			f = strings.ToUpper(f)
			if _, known := baseStates[BaseState(f)]; known && s.Base == "" {
				s.Base = BaseState(f)
				continue
			}
			rest = append(rest, f)
		}
	}
	if s.Base == "" && len(rest) > 0 {
		// A base state this package does not know yet: keep it visible,
		// never terminal.
		s.Base, rest = BaseState(rest[0]), rest[1:]
	}
	s.Flags = rest
	return s
}

// Terminal reports whether the job has ended (its base state is final).
func (s State) Terminal() bool { return s.Base.Terminal() }

// Has reports whether flag is set.
func (s State) Has(flag string) bool { return slices.Contains(s.Flags, strings.ToUpper(flag)) }

// Equal compares base state and flags.
func (s State) Equal(o State) bool { return s.Base == o.Base && slices.Equal(s.Flags, o.Flags) }

// IsZero reports whether nothing was read.
func (s State) IsZero() bool { return s.Base == "" && len(s.Flags) == 0 }

// String prints "RUNNING" or "CANCELLED+COMPLETING".
func (s State) String() string {
	return strings.Join(append([]string{string(s.Base)}, s.Flags...), "+")
}

// MarshalJSON writes the array form slurmrestd uses.
func (s State) MarshalJSON() ([]byte, error) {
	return json.Marshal(append([]string{string(s.Base)}, s.Flags...))
}

// UnmarshalJSON accepts the array or the string form.
func (s *State) UnmarshalJSON(b []byte) error {
	var l wire.StringList
	if err := l.UnmarshalJSON(b); err != nil {
		return fmt.Errorf("job state: %w", err)
	}
	*s = ParseState(l...)
	return nil
}

// ExitStatus is how the batch script ended: its return code and, when it was
// killed, the signal. Sacct prints it as "Code:Signal".
type ExitStatus struct {
	Code       int      `json:"code"`
	Signal     int      `json:"signal"`
	SignalName string   `json:"signal_name,omitempty"`
	Status     []string `json:"status,omitempty"` // SUCCESS, ERROR, SIGNALED, CORE_DUMPED, PENDING, INVALID
}

// String prints "3:0" like sacct.
func (e ExitStatus) String() string { return fmt.Sprintf("%d:%d", e.Code, e.Signal) }

// wireExit decodes exit_code: the v0.0.40+ object, or the bare wait(2)
// status older versions sent.
type wireExit struct{ ExitStatus }

func (w *wireExit) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	w.ExitStatus = ExitStatus{}
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '{' {
		var raw struct {
			Status     wire.StringList `json:"status"`
			ReturnCode *wire.NoVal     `json:"return_code"`
			Signal     struct {
				ID   wire.NoVal `json:"id"`
				Name string     `json:"name"`
			} `json:"signal"`
			// A {"set","number"} object in this place is the old NoVal form.
			Set *bool `json:"set"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return fmt.Errorf("exit code: %w", err)
		}
		if raw.Set != nil {
			var n wire.NoVal
			if err := n.UnmarshalJSON(b); err != nil {
				return fmt.Errorf("exit code: %w", err)
			}
			w.ExitStatus = fromWaitStatus(n.Value(0))
			return nil
		}
		if raw.ReturnCode != nil {
			w.Code = int(raw.ReturnCode.Value(0))
		}
		w.Signal = int(raw.Signal.ID.Value(0))
		w.SignalName = raw.Signal.Name
		w.Status = raw.Status
		return nil
	}
	var n wire.NoVal
	if err := n.UnmarshalJSON(b); err != nil {
		return fmt.Errorf("exit code: %w", err)
	}
	w.ExitStatus = fromWaitStatus(n.Value(0))
	return nil
}

// fromWaitStatus splits a wait(2) status as slurmctld stores it.
func fromWaitStatus(ws int64) ExitStatus {
	e := ExitStatus{Code: int(ws>>8) & 0xff, Signal: int(ws & 0x7f)}
	switch {
	case e.Signal != 0:
		e.Status = []string{"SIGNALED"}
	case e.Code != 0:
		e.Status = []string{"ERROR"}
	default:
		e.Status = []string{"SUCCESS"}
	}
	return e
}
