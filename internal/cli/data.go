package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// stdin is what --data - reads; tests replace it.
var stdin io.Reader = os.Stdin

// stdinName names standard input in messages.
const stdinName = "standard input"

// displayName is how output names a --data or --out path: "-" is the
// stream (standard input or standard output).
func displayName(path, stream string) string {
	if path == "-" {
		return stream
	}
	return path
}

// dataFlags say how to read a log file that is not in the contract's own
// form; package dataset does the work (logio.ReadOptions).
type dataFlags struct {
	Format       string   `placeholder:"FORMAT" help:"The file's format: csv, tsv, csv.gz, tsv.gz or parquet (default: by the file's extension; needed to read standard input, --data -)."`
	Column       []string `name:"column" sep:"none" placeholder:"ROLE=NAME" help:"Read the file's column NAME as the log contract's column ROLE, e.g. behavior_prob=pscore, episode=trajectory_id, t=step; a prefix maps a vector: state_=obs_ reads obs_0, obs_1, ...; a named target policy's column adds @NAME: target_prob@A=p_a. Repeatable."`
	Ignore       []string `placeholder:"NAME" help:"Drop these columns of the file unread (any other column the contract does not know is refused)."`
	Categorical  []string `placeholder:"state|action" help:"The state and/or action columns hold labels (strings): they get ids 0, 1, ... in sorted order."`
	WriteMapping string   `name:"write-mapping" placeholder:"FILE" help:"With --categorical: write the labels' ids to FILE (CSV: column,id,label)."`
	Verbose      bool     `help:"Show the Parquet library's own log messages, hidden otherwise."`
	Bandit       bool     `help:"Read every row as an episode of one step that ends in a terminal state: a contextual bandit's log (Open Bandit Pipeline's), which has no episode and no t column. estimate then runs is-trajectory (IPW), wis-trajectory (SNIPW), fqe (the direct method) and dr (DR) by default."`

	stdinRead []byte // standard input as read (--data -), which readPolicies reads again
	// target is the first --target-policy file's policy, if any: a log
	// without target columns is read with its probabilities
	// (logio.ReadOptions.Target).
	target     dataset.TablePolicy
	targetFile string
	// beforeTarget checks the log's size before target fills its
	// probabilities at every step (logio.ReadOptions.BeforeTarget).
	beforeTarget func(*dataset.Dataset) error
}

// options checks the flags and returns them as logio.ReadOptions; a
// mistake in them is a usage error.
func (f *dataFlags) options(path string) (logio.ReadOptions, error) {
	var o logio.ReadOptions
	if f.Format != "" {
		format, err := logio.ParseFormat(f.Format)
		if err != nil {
			return o, usagef("--format: %v", err)
		}
		o.Format = format
	}
	if path == "-" && o.Format == "" {
		return o, usagef("--data -: give the format of standard input with --format (csv, tsv, csv.gz, tsv.gz or parquet)")
	}
	cols, err := logio.ParseColumns(f.Column)
	if err != nil {
		return o, usageError{err}
	}
	o.Columns, o.Ignore, o.Categorical, o.Target = cols, f.Ignore, f.Categorical, f.target
	o.OneStep = f.Bandit
	o.BeforeTarget = f.beforeTarget
	if err := o.Check(); err != nil {
		return o, usageError{err}
	}
	if f.WriteMapping != "" && len(f.Categorical) == 0 {
		return o, usagef("--write-mapping: no column is read as labels (--categorical state,action)")
	}
	return o, nil
}

// read reads the log at path ("-" for standard input) as the flags say
// and writes the labels' mapping if asked.
func (f *dataFlags) read(path string, stderr io.Writer) (*dataset.Dataset, error) {
	o, err := f.options(path)
	if err != nil {
		return nil, err
	}
	// parquet-go logs some warnings of its own (a DECIMAL of low precision,
	// say) through the standard logger: they are the library's business,
	// not the user's, unless asked for.
	prev := log.Writer()
	if f.Verbose {
		log.SetOutput(stderr)
	} else {
		log.SetOutput(io.Discard)
	}
	var in bytes.Buffer // standard input as read, for readPolicies
	if path == "-" {
		prevIn := stdin
		stdin = io.TeeReader(stdin, &in)
		defer func() { stdin = prevIn }()
	}
	d, labels, err := readLog(path, o, stderr)
	log.SetOutput(prev)
	var fe *logio.FormatError
	if err != nil && f.target != nil && !errors.As(err, &fe) {
		// The log read with the policy file's probabilities (no target
		// columns): a state or action the file does not cover.
		return nil, fmt.Errorf("%w (the target's probabilities from %s)", err, f.targetFile)
	}
	if err != nil {
		return nil, targetHint(err)
	}
	if f.WriteMapping != "" {
		if err := writeLabels(f.WriteMapping, labels); err != nil {
			return nil, err
		}
	}
	f.stdinRead = in.Bytes()
	return d, nil
}

// readPolicies returns one dataset per target policy the log names in its
// columns (target_prob@NAME, ...; logio.ReadPolicies): d, as read and
// given its behavior, for the first, and for each other the log read
// again (standard input from what read kept of it) with d's columns but
// the target's.
func (f *dataFlags) readPolicies(path string, d *dataset.Dataset, stderr io.Writer) ([]*dataset.Dataset, error) {
	if len(d.Policies) <= 1 {
		return []*dataset.Dataset{d}, nil
	}
	o, err := f.options(path)
	if err != nil {
		return nil, err
	}
	prev := log.Writer()
	defer log.SetOutput(prev)
	if !f.Verbose {
		log.SetOutput(io.Discard)
	}
	return logio.ReadPolicies(d, o, func(o logio.ReadOptions) (*dataset.Dataset, error) {
		if path == "-" {
			d, _, err := logio.Read(bytes.NewReader(f.stdinRead), stdinName, o)
			return d, err
		}
		d, _, err := readLog(path, o, stderr)
		return d, err
	})
}

// writeLabels writes the labels' ids to path (--write-mapping); they are
// few, so they are written whole.
func writeLabels(path string, l *logio.Labels) error {
	var buf bytes.Buffer
	if err := l.WriteCSV(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--write-mapping: %w", err)
	}
	return nil
}

// writeData writes d to path in the format its extension names, or with
// path "-" to stdout in format.
func writeData(path, format string, stdout io.Writer, d *dataset.Dataset) error {
	if path != "-" {
		if format != "" {
			if f, err := logio.FormatOf(path); err != nil || string(f) != format {
				return usagef("--format %s: the format of --out is its extension (%s)", format, path)
			}
		}
		return logio.WriteFile(path, d)
	}
	if format == "" {
		return usagef("--out -: give the format to write to standard output with --format (csv, tsv, csv.gz, tsv.gz or parquet)")
	}
	f, err := logio.ParseFormat(format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	return logio.Write(stdout, d, f)
}

// targetHint adds to a log's missing target column that estimate can
// take the target's probabilities from a policy file instead.
func targetHint(err error) error {
	var fe *logio.FormatError
	if errors.As(err, &fe) && fe.Column == "target_prob" && strings.HasPrefix(fe.Msg, "required column is missing") {
		hint := *fe
		hint.Msg += "; or, for discrete states and actions, give the target policy as a file, --target-policy FILE (rows state,p0,p1,...); with real actions the logged action's target density is needed (target_prob or target_logprob)"
		return &hint
	}
	return err
}
