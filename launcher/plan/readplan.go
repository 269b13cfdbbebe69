package plan

import (
	"encoding/json"
	"fmt"

	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// MaxPlanSize bounds plan.json: a plan is tens of KB; a larger file (or a
// FIFO, a device) is not one.
const MaxPlanSize = readlimit.Default

// ReadPlan reads and validates a plan file: what the driver, the in-job
// steps and attach all start from.
func ReadPlan(path string) (*Plan, error) {
	data, err := readlimit.ReadFile(path, MaxPlanSize)
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	var pl Plan
	if err := json.Unmarshal(data, &pl); err != nil {
		return nil, fmt.Errorf("decoding plan %s: %w", path, err)
	}
	if err := pl.Validate(); err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	return &pl, nil
}
