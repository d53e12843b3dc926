package logio

import (
	"fmt"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
)

// ReadPolicies returns one dataset.Dataset per target policy that a log names in
// its columns (target_prob@NAME, target_logprob@NAME,
// target_prob_k@NAME, next_target_prob_k@NAME), in the order of
// d.Policies: d itself for d.Policy, and for each other policy the log
// read again by read with ReadOptions.Policy set to it. The readings
// check each policy's columns exactly as one policy's are checked (the
// file, row and column of a bad value), at the cost of one reading of
// the file per policy. The datasets share d's columns but the target's
// (LogTarget, TargetProbs, FinalTargetProbs, HasFinalTarget, and
// NumActions, which counts the target_prob_k columns), so the other
// columns are held once.
//
// A log without named policies gives []*dataset.Dataset{d}.
func ReadPolicies(d *dataset.Dataset, o ReadOptions, read func(ReadOptions) (*dataset.Dataset, error)) ([]*dataset.Dataset, error) {
	if len(d.Policies) == 0 {
		return []*dataset.Dataset{d}, nil
	}
	out := make([]*dataset.Dataset, len(d.Policies))
	for i, name := range d.Policies {
		if name == d.Policy {
			out[i] = d
			continue
		}
		o.Policy = name
		other, err := read(o)
		if err != nil {
			return nil, err
		}
		if other.Policy != name || !slices.Equal(other.Start, d.Start) || !slices.Equal(other.IDs, d.IDs) {
			return nil, fmt.Errorf("dataset: the log changed between its readings for target policies %q and %q", d.Policy, name)
		}
		v := *d
		v.LogTarget, v.TargetProbs, v.FinalTargetProbs, v.HasFinalTarget = other.LogTarget, other.TargetProbs, other.FinalTargetProbs, other.HasFinalTarget
		v.NumActions, v.Policy = other.NumActions, name
		out[i] = &v
	}
	return out, nil
}

// ReadFilePolicies reads a log as ReadFileWith does and returns one
// dataset.Dataset per target policy it names (ReadPolicies): a log whose target
// columns are unnamed gives one.
func ReadFilePolicies(path string, o ReadOptions) ([]*dataset.Dataset, *Labels, error) {
	d, labels, err := ReadFileWith(path, o)
	if err != nil {
		return nil, nil, err
	}
	ds, err := ReadPolicies(d, o, func(o ReadOptions) (*dataset.Dataset, error) {
		d, _, err := ReadFileWith(path, o)
		return d, err
	})
	return ds, labels, err
}
