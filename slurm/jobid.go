package slurm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/slurm/wire"
)

// JobID is a Slurm job id. On the wire it is a number (job info), a string
// (jobs/state) or a wire.NoVal object (v0.0.42 cancel status); all decode.
type JobID int64

func (id JobID) String() string { return strconv.FormatInt(int64(id), 10) }

// UnmarshalJSON accepts 12, "12" and {"set":true,"number":12}.
func (id *JobID) UnmarshalJSON(b []byte) error {
	var n wire.NoVal
	if err := n.UnmarshalJSON(b); err != nil {
		return fmt.Errorf("job id: %w", err)
	}
	*id = JobID(n.Value(0))
	return nil
}

// ParseJobID parses a job id as operators type it ("1234"). Array and
// het-job suffixes ("1234_5", "1234+1") are refused: the launcher only
// submits plain batch jobs.
func ParseJobID(s string) (JobID, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a Slurm job id (a positive number)", s)
	}
	return JobID(v), nil
}
