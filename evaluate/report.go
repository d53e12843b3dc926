package evaluate

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"codeberg.org/go-fonts/liberation/liberationserifregular"

	"github.com/ihope-ope/ihope/figure"
	"github.com/ihope-ope/ihope/internal/buildinfo"
	"github.com/ihope-ope/ihope/internal/words"
	"github.com/ihope-ope/ihope/ope"
)

// The HTML report of estimate --report: one self-contained file (styles
// and figures inline, SVG drawn by package figure, no script, and a
// content security policy that forbids the page any request), so it can
// be mailed, archived and opened offline.

//go:embed report.html.tmpl
var reportTemplate string

// reportTmpl is parsed on first use, not when the program starts: every
// run would pay for it, few write a report.
var reportTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(reportTemplate))
})

// reportView is what the template shows.
type reportView struct {
	FontFace               template.CSS
	File, Command, Version string
	Level                  string // "95%", the intervals' coverage
	Data                   []fact
	Intervals              string
	Policies               []policyView
	Multi                  bool
	Timed                  bool // the rows carry times (--timings)
	Ranking                *rankingView
	Warnings               []string
	Bounds                 bool // some row has a bound (--bounds)
	// Recommended says, per target policy, which estimate to use and why
	// (ope.Recommend): the report's first words.
	Recommended []string
}

// fact is one line of the data summary.
type fact struct{ Name, Value string }

type policyView struct {
	Title     string
	Verdict   string // against --baseline
	Reference string
	Notes     []string
	Rows      []rowView
	Forest    template.HTML
	Weights   []weightView
}

type rowView struct {
	Estimator, Label, Estimate, Interval, Bound, ESS, Share, Targets, Model, Time, Error string
}

type weightView struct {
	Estimator string
	SVG       template.HTML
	Note      string
}

type rankingView struct {
	Metrics bool
	Rows    []rankingRow
	Note    string
}

type rankingRow struct{ Estimator, Order, Spearman, Regret string }

// writeReport writes the HTML report of rep to path; args is the command
// line after the program's name.
func writeReport(path string, rep *Report, args []string) error {
	v, err := newReportView(rep, args)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	var b bytes.Buffer
	if err := reportTmpl().Execute(&b, v); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}

func newReportView(rep *Report, args []string) (*reportView, error) {
	v := &reportView{FontFace: fontFace(), File: rep.Data.File, Command: shellQuote(append([]string{"ihope"}, args...)), Version: buildinfo.Version(),
		Data: dataFacts(rep.Data), Warnings: rep.Warnings, Multi: len(rep.Policies) > 1}
	for _, r := range rep.Recommended {
		who := "The target policy"
		if r.Policy != "" {
			who = "Policy " + r.Policy
		}
		if r.Estimator == nil {
			v.Recommended = append(v.Recommended, fmt.Sprintf("%s: no estimate is recommended: %s.", who, r.Why))
			continue
		}
		v.Recommended = append(v.Recommended, fmt.Sprintf("%s: %s from %s, interval [%s, %s]: %s.", who, fmtBound(r.Estimate), *r.Estimator, fmtBound(r.CILow), fmtBound(r.CIHigh), r.Why))
	}
	for _, row := range rep.Estimates {
		v.Timed = v.Timed || row.Seconds > 0
		v.Bounds = v.Bounds || row.RowBound != nil
	}
	v.Level = "95%"
	if b := rep.Bootstrap; b != nil {
		v.Level = fmt.Sprintf("%g%%", 100*(1-b.Alpha))
		v.Intervals = b.describe()
	}
	policies := rep.Policies
	if len(policies) == 0 {
		policies = []PolicyInfo{{}}
	}
	// One x scale per policy's forest plot: a policy whose rows lie close
	// together is not squeezed by another's wide interval.
	for _, p := range policies {
		lo, hi := math.Inf(1), math.Inf(-1)
		widen := func(x *float64) {
			if x != nil && !math.IsNaN(*x) && !math.IsInf(*x, 0) {
				lo, hi = math.Min(lo, *x), math.Max(hi, *x)
			}
		}
		for _, row := range rep.Estimates {
			if row.Policy != p.Name {
				continue
			}
			widen(row.Estimate)
			l, h := interval(row)
			widen(l)
			widen(h)
		}
		widen(p.Reference)
		pv, err := newPolicyView(rep, p, lo, hi)
		if err != nil {
			return nil, err
		}
		v.Policies = append(v.Policies, pv)
	}
	if r := rep.Ranking; r != nil {
		v.Ranking = newRankingView(r)
	}
	return v, nil
}

// interval returns the row's interval as the table shows it: the
// bootstrap's, or else the Wald one.
func interval(row Row) (lo, hi *float64) {
	if row.CILow != nil {
		return row.CILow, row.CIHigh
	}
	return row.WaldLow, row.WaldHigh
}

// boundText is a row's bound as the report shows it ("" for none).
func boundText(row Row) string {
	if row.RowBound == nil {
		return ""
	}
	if row.BoundLow == nil && row.BoundHigh == nil {
		return row.BoundNote
	}
	g := "asymptotic"
	if row.BoundGuaranteed {
		g = "guaranteed"
	}
	text := fmt.Sprintf("[%s, %s] %s, %s", fmtBound(row.BoundLow), fmtBound(row.BoundHigh), row.BoundMethod, g)
	if row.BoundBroken != "" {
		text += "; it assumes " + row.BoundBroken + ": it decides no verdict"
	}
	return text
}

func newPolicyView(rep *Report, p PolicyInfo, lo, hi float64) (policyView, error) {
	pv := policyView{Title: policyTitle(p, "the logs' target policy")}
	for _, v := range rep.Verdicts {
		if v.Policy == p.Name {
			pv.Verdict = fmt.Sprintf("Against %s: %s (%s).", v.Baseline, v.Verdict, v.Why)
		}
	}
	ref := math.NaN()
	if p.Reference != nil {
		ref = *p.Reference
		pv.Reference = words.Num("%.6g", ref)
	}
	var forest []figure.ForestRow
	for _, row := range rep.Estimates {
		if row.Policy != p.Name {
			continue
		}
		rv := rowView{Estimator: row.Estimator, Estimate: "failed", Interval: "-", ESS: "-", Share: "-",
			Targets: row.Estimand, Model: row.Model, Time: words.Duration(row.Seconds), Error: row.Error}
		if en, ok := ope.Lookup(row.Estimator); ok {
			rv.Label = en.Label
		}
		rv.Bound = boundText(row)
		if row.Note != "" {
			rv.Targets += " *"
			if !slices.Contains(pv.Notes, targetsNote) {
				pv.Notes = append(pv.Notes, targetsNote)
			}
		}
		fr := figure.ForestRow{Estimator: row.Estimator, Estimate: math.NaN(), Low: math.NaN(), High: math.NaN()}
		if row.Estimate != nil {
			rv.Estimate = words.Num("%.6g", *row.Estimate)
			fr.Estimate = *row.Estimate
		}
		if l, h := interval(row); l != nil {
			rv.Interval = fmt.Sprintf("[%s, %s]", words.Num("%.6g", *l), words.Num("%.6g", *h))
			if row.Interval == "student-t" {
				rv.Interval += " t"
				if !slices.Contains(pv.Notes, studentNote) {
					pv.Notes = append(pv.Notes, studentNote)
				}
			}
			if row.CILow == nil {
				rv.Interval += " Wald"
				fr.Note = "Wald"
				if !slices.Contains(pv.Notes, waldNote) {
					pv.Notes = append(pv.Notes, waldNote)
				}
			}
			fr.Low, fr.High = *l, *h
		}
		if row.Unit != "" && row.Estimate != nil {
			rv.ESS = fmt.Sprintf("%.1f of %s", row.ESS, words.Plural(row.Units, row.Unit))
			rv.Share = "not kept"
			if row.MaxWeightShare != nil {
				rv.Share = fmt.Sprintf("%.2f%%", 100**row.MaxWeightShare)
			}
		}
		if row.IdentificationLow != nil {
			pv.Notes = append(pv.Notes, fmt.Sprintf("%s: identification range [%s, %s], the estimates of every ratio of its class that the log does not reject (flow test, %g).",
				row.Estimator, words.Num("%.6g", *row.IdentificationLow), words.Num("%.6g", *row.IdentificationHigh), ope.IdentificationAlpha))
		}
		pv.Rows = append(pv.Rows, rv)
		forest = append(forest, fr)
		if len(row.weights) > 0 && row.Unit != "" { // naive's equal weights say nothing
			wv := weightView{Estimator: row.Estimator}
			if f, err := figure.Weights(row.Estimator, row.weights, row.ESS, row.Unit); err != nil {
				wv.Note = err.Error()
			} else if wv.SVG, err = inlineSVG(f); err != nil {
				return pv, err
			}
			pv.Weights = append(pv.Weights, wv)
		}
	}
	if len(forest) > 0 {
		title := "estimates and intervals"
		if p.Name != "" {
			title += ", " + p.Name
		}
		f, err := figure.Forest(title, forest, ref, lo, hi)
		if err != nil {
			return pv, err
		}
		if pv.Forest, err = inlineSVG(f); err != nil {
			return pv, err
		}
	}
	return pv, nil
}

func newRankingView(r *Ranking) *rankingView {
	v := &rankingView{}
	n := 0
	for _, p := range r.Reference {
		if p != nil {
			n++
		}
	}
	for _, e := range r.Estimators {
		v.Metrics = v.Metrics || e.Compared > 0
	}
	if len(r.ReferenceOrder) > 0 {
		v.Rows = append(v.Rows, rankingRow{Estimator: "reference", Order: orderText(r.ReferenceOrder, nil)})
	}
	for _, e := range r.Estimators {
		row := rankingRow{Estimator: e.Estimator, Order: e.text(), Spearman: "-", Regret: "-"}
		if e.Spearman != nil {
			row.Spearman = words.Num("%.3f", *e.Spearman)
		}
		if e.RegretAt1 != nil {
			row.Regret = words.Num("%.3f", *e.RegretAt1)
		}
		v.Rows = append(v.Rows, row)
	}
	if v.Metrics && n < len(r.Policies) {
		v.Note = fmt.Sprintf("The correlations and regrets compare the %d policies with a reference value.", n)
	}
	return v
}

// Notes under a policy's table.
const (
	targetsNote = "* targets another quantity than the estimand asked for (see the warnings)."
	waldNote    = "Wald: an influence-function interval, clustered by episode (no bootstrap interval)."
	studentNote = "t: mean ± Student t × sd of the resamples, too few for percentiles."
)

// fontFace is the CSS that gives the page the font the figures are
// measured in (gonum/plot's Liberation Serif), so their labels keep
// their places on a machine without it. One copy serves every figure.
func fontFace() template.CSS {
	return template.CSS(`@font-face { font-family: "Liberation Serif"; src: url(data:font/ttf;base64,` +
		base64.StdEncoding.EncodeToString(liberationserifregular.TTF) + `) format("truetype"); }`)
}

// dataFacts is the data summary as the report lists it.
func dataFacts(d DataSummary) []fact {
	quantity := "average reward per step (gamma = 1)"
	if d.Gamma < 1 {
		quantity = fmt.Sprintf("normalised discounted reward, gamma = %g", d.Gamma)
	}
	out := []fact{
		{"file", d.File},
		{"episodes", fmt.Sprintf("%d, of %d to %d steps", d.Episodes, d.MinLength, d.MaxLength)},
		{"steps", fmt.Sprint(d.Steps)},
	}
	if d.StateKind == "discrete" {
		out = append(out, fact{"states", fmt.Sprintf("discrete, %d seen; %d actions seen", d.StatesSeen, d.ActionsSeen)})
	} else {
		out = append(out, fact{"states", fmt.Sprintf("real, %d dimensions", d.StateDim)})
	}
	mean := "-"
	if d.MeanReward != nil {
		mean = words.Num("%.6g", *d.MeanReward)
	}
	out = append(out, fact{"mean logged reward", mean}, fact{"quantity", quantity}, fact{"estimand", d.Estimand})
	behavior := d.Behavior
	if f := d.BehaviorFit; f != nil {
		behavior = fmt.Sprintf("fitted (%s, cross-fitted over %d folds)", f.Model, f.Folds)
	}
	out = append(out, fact{"behavior probabilities", behavior})
	if d.ZeroTarget > 0 {
		out = append(out, fact{"steps whose action the target never takes", fmt.Sprint(d.ZeroTarget)})
	}
	if d.LargeRatio > 0 {
		out = append(out, fact{"steps with pi/pi0 above 1e6", fmt.Sprint(d.LargeRatio)})
	}
	if d.OpenEndings > 0 {
		out = append(out, fact{"episodes without a next state after their last step", fmt.Sprint(d.OpenEndings)})
	}
	if d.Terminal > 0 {
		out = append(out, fact{"episodes that ended in a terminal state", fmt.Sprint(d.Terminal)})
	}
	return out
}

// svgHeader matches what precedes the <svg> element in a standalone SVG
// file (the XML declaration and a comment), which HTML does not want;
// compiled on first use.
var svgHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^.*?(<svg\b)`) })

// inlineSVG returns a figure as an <svg> element to put in HTML.
func inlineSVG(f *figure.Figure) (template.HTML, error) {
	b, err := f.SVG()
	if err != nil {
		return "", err
	}
	// The SVG is ours (package figure's output, its texts escaped by the
	// SVG writer), so it goes in as it is.
	return template.HTML(svgHeader().ReplaceAllString(string(b), "$1")), nil
}

// shellQuote writes a command line that a POSIX shell reads back as args.
func shellQuote(args []string) string {
	safe := regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)
	out := make([]string, len(args))
	for i, a := range args {
		if safe.MatchString(a) {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// CheckReportPath refuses a --report path that would overwrite an input:
// one not named .html or .htm (the report is an HTML page, so any other
// name is almost surely a data path given to the wrong flag: --report
// v.csv once replaced the log v.csv), or one that is the same file as an
// input (os.SameFile: links and other spellings of the path included).
// It runs before anything is read, so a refused run costs nothing.
func CheckReportPath(report string, inputs []string) error {
	if ext := strings.ToLower(filepath.Ext(report)); ext != ".html" && ext != ".htm" {
		return usagef("--report %s: the report is an HTML page; name it FILE.html (a name without .html is refused so that a data file given to the wrong flag is not overwritten)", report)
	}
	out, err := os.Stat(report)
	if err != nil {
		return nil // a new file: nothing to overwrite
	}
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		if st, err := os.Stat(in); err == nil && os.SameFile(out, st) {
			return usagef("--report %s is the input %s: writing the report would overwrite it; give another FILE.html", report, in)
		}
	}
	return nil
}
