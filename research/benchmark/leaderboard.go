package benchmark

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/rank"
)

// NMSEFloor is the least normalised MSE a table shows: an estimator
// exact to rounding (a model of a deterministic world) would have log10
// MSE near -30, and one such world would then outweigh every other in an
// average of logs. Errors below a millionth of the family's spread all
// count as exact: log10 nMSE -12.
const NMSEFloor = 1e-12

// Board is the leaderboard of a benchmark run: per world and overall,
// every estimator's error against the exact truth, the coverage of its
// intervals and how well it ranks the world's family of targets.
type Board struct {
	// Suites are the suites it covers, Seeds the most seeds of a cell.
	Suites []string `json:"suites"`
	Seeds  int      `json:"seeds"`
	Quick  bool     `json:"quick"`
	// Level is the intervals' nominal coverage, Resamples the bootstrap
	// resamples behind a percentile interval.
	Level     float64 `json:"interval_level"`
	Resamples int     `json:"bootstrap_resamples"`
	// Seconds is the wall time of the run that wrote it, Ran and Found
	// the cells it computed and the cells it found done (set by the
	// caller; 0 when unknown).
	Seconds    float64 `json:"wall_seconds,omitempty"`
	Ran, Found int     `json:"-"`
	// Overall has one row per estimator, summarised over the worlds, best
	// first; Worlds has each world's table.
	Overall []Row        `json:"overall"`
	Worlds  []WorldBoard `json:"worlds"`
}

// WorldBoard is one world's table.
type WorldBoard struct {
	World  string `json:"world"`
	Suite  string `json:"suite"`
	Title  string `json:"title"`
	Source string `json:"source"`
	// Episodes of Horizon steps were logged per seed; Gamma discounts.
	Episodes int     `json:"n"`
	Horizon  int     `json:"T"`
	Gamma    float64 `json:"gamma"`
	Seeds    int     `json:"seeds"`
	// Targets are the family, Truths their exact horizon values (the
	// estimand asked for) and LongRun their long-run values; Spread is
	// max - min of Truths, the scale of the normalised MSE and of regret.
	Targets []string        `json:"targets"`
	Truths  []results.Float `json:"truths"`
	LongRun []results.Float `json:"truths_long_run"`
	Spread  results.Float   `json:"spread"`
	// Rows has one row per estimator, lowest MSE first.
	Rows []Row `json:"estimators"`

	nmse map[string][]float64 // estimator -> per-seed normalised MSE, for the figure
}

// Row is one estimator's line of a table. Numbers that are undefined
// (no interval, a constant family of truths, every run failed) are null
// in JSON and "-" in Markdown.
type Row struct {
	Estimator string `json:"estimator"`
	// Estimand is the quantity its estimates target, and so the truth
	// it is scored against ("horizon", "long-run").
	Estimand string `json:"estimand,omitempty"`
	// Log10MSE is log10 of its mean squared error against the exact
	// truth over every target and seed of the world; Log10NMSE that of
	// the MSE divided by the squared spread of the family's values, a
	// scale-free error that can be averaged over worlds (the overall
	// row's is that average).
	Log10MSE  *float64 `json:"log10_mse,omitempty"`
	Log10NMSE *float64 `json:"log10_nmse"`
	// Exact marks an MSE at the floor (NMSEFloor): exact to rounding.
	Exact bool `json:"exact,omitempty"`
	// Rank is its rank by MSE within the world (1 is best); overall, the
	// mean of those ranks.
	Rank *float64 `json:"rank"`
	// Coverage is the share of cells whose interval holds the truth;
	// Interval says how the intervals were computed ("wald",
	// "percentile" or "student-t" bootstrap; "mixed").
	Coverage *float64 `json:"coverage"`
	Interval string   `json:"interval,omitempty"`
	// Spearman is the mean over seeds of the rank correlation of its
	// estimates of the family with the truths; Regret1 and Regret5 the
	// mean normalised regret@1 and @5 of the policies it would pick.
	Spearman *float64 `json:"spearman"`
	Regret1  *float64 `json:"regret_at_1"`
	Regret5  *float64 `json:"regret_at_5"`
	// Cells counts its estimates, Failed the runs that returned an error
	// (left out of every number); Worlds, overall, the worlds averaged.
	Cells  int `json:"cells,omitempty"`
	Failed int `json:"failed"`
	Worlds int `json:"worlds,omitempty"`
}

// SuiteResults is what Build reads of one suite's run: its worlds (as
// run, quick or full) and the lines of its results file.
type SuiteResults struct {
	Suite  Suite
	Worlds []*World
	Lines  []results.Line
}

// Build computes the leaderboard of the suites' results. Each world's
// table summarises its panel's lines; the overall table averages the
// worlds' tables.
func Build(runs []SuiteResults, quick bool) *Board {
	b := &Board{Quick: quick, Level: 1 - Alpha, Resamples: Resamples}
	if quick {
		b.Resamples = QuickResamples
	}
	for _, r := range runs {
		b.Suites = append(b.Suites, r.Suite.Name)
		for _, w := range r.Worlds {
			wb := worldBoard(r.Suite.Name, w, r.Lines)
			b.Seeds = max(b.Seeds, wb.Seeds)
			b.Worlds = append(b.Worlds, wb)
		}
	}
	b.Overall = overall(b.Worlds)
	return b
}

// cellStats accumulates one estimator's numbers over a world's cells.
type cellStats struct {
	estimand, interval string
	sq                 []float64
	covered, intervals int
	failed             int
	bySeed             map[int][]float64 // seed -> squared errors
	spearman, r1, r5   []float64
}

// worldBoard summarises the lines of world w's panel.
func worldBoard(suite string, w *World, lines []results.Line) WorldBoard {
	wb := WorldBoard{World: w.Name, Suite: suite, Title: w.Title, Source: w.Source,
		Episodes: w.N, Horizon: w.T, Gamma: w.Gamma, nmse: map[string][]float64{}}
	index := map[string]int{} // target name -> position
	for i, t := range w.Targets {
		wb.Targets = append(wb.Targets, t.Name)
		index[t.Name] = i
	}
	wb.Truths = nanSlice(len(w.Targets))
	wb.LongRun = nanSlice(len(w.Targets))
	truths := make([]float64, len(w.Targets)) // horizon values, NaN where no cell
	bySeed := map[int][]*results.Line{}       // seed -> line per target
	var names []string
	stats := map[string]*cellStats{}
	rlo, rhi := rewardRange(w)
	for k := range lines {
		if _, ok := index[lines[k].Setting]; lines[k].Panel != w.Name || !ok {
			continue
		}
		lc := withRecommended(lines[k], rlo, rhi)
		l := &lc
		i := index[l.Setting]
		wb.Truths[i] = l.Truth
		if v, ok := l.Truths["long-run"]; ok {
			wb.LongRun[i] = v
		}
		if bySeed[l.Seed] == nil {
			bySeed[l.Seed] = make([]*results.Line, len(w.Targets))
		}
		bySeed[l.Seed][i] = l
		for j := range l.Records {
			r := &l.Records[j]
			st := stats[r.Estimator]
			if st == nil {
				st = &cellStats{bySeed: map[int][]float64{}}
				stats[r.Estimator] = st
				names = append(names, r.Estimator)
			}
			if r.Error != "" || math.IsNaN(float64(r.SqError)) {
				st.failed++
				continue
			}
			if st.estimand == "" {
				st.estimand = r.Estimand
			}
			st.sq = append(st.sq, float64(r.SqError))
			st.bySeed[l.Seed] = append(st.bySeed[l.Seed], float64(r.SqError))
			if c, ok := l.Covers(r); ok {
				st.intervals++
				if c {
					st.covered++
				}
				st.interval = joinKind(st.interval, r.Interval)
			}
		}
	}
	wb.Seeds = len(bySeed)
	for i, v := range wb.Truths {
		truths[i] = float64(v)
	}
	lo, hi := finiteRange(truths)
	sp := hi - lo
	wb.Spread = results.Float(sp)
	seeds := make([]int, 0, len(bySeed))
	for s := range bySeed {
		seeds = append(seeds, s)
	}
	slices.Sort(seeds)
	for _, seed := range seeds {
		rankSeed(bySeed[seed], stats)
	}
	for _, name := range names {
		st := stats[name]
		row := Row{Estimator: name, Estimand: st.estimand, Interval: st.interval,
			Cells: len(st.sq), Failed: st.failed}
		if len(st.sq) > 0 {
			nmse := math.Max(stat.Mean(st.sq, nil)/(sp*sp), NMSEFloor)
			row.Exact = nmse == NMSEFloor
			row.Log10MSE = num(math.Log10(nmse * sp * sp))
			row.Log10NMSE = num(math.Log10(nmse))
		}
		if st.intervals > 0 {
			row.Coverage = num(float64(st.covered) / float64(st.intervals))
		}
		row.Spearman, row.Regret1, row.Regret5 = meanNum(st.spearman), meanNum(st.r1), meanNum(st.r5)
		for _, seed := range seeds {
			if v := st.bySeed[seed]; len(v) > 0 {
				wb.nmse[name] = append(wb.nmse[name], math.Max(stat.Mean(v, nil)/(sp*sp), NMSEFloor))
			}
		}
		wb.Rows = append(wb.Rows, row)
	}
	rankRows(wb.Rows)
	slices.SortStableFunc(wb.Rows, func(a, b Row) int { return cmpNum(a.Log10MSE, b.Log10MSE) })
	return wb
}

// rankSeed adds every estimator's ranking metrics at one seed: its
// estimates of the whole family (the same log) against the truths of the
// estimand it targets. A seed where a target's cell is missing or the
// estimator failed on one is left out for that estimator.
func rankSeed(cells []*results.Line, stats map[string]*cellStats) {
	for name, st := range stats {
		est, truth := make([]float64, len(cells)), make([]float64, len(cells))
		complete := true
		for i, l := range cells {
			r := record(l, name)
			if r == nil || r.Error != "" || math.IsNaN(float64(r.Estimate)) {
				complete = false
				break
			}
			est[i], truth[i] = float64(r.Estimate), l.TruthOf(r)
		}
		if !complete {
			continue
		}
		st.spearman = append(st.spearman, rank.Spearman(est, truth))
		// A family whose truths are all equal has no policy to regret
		// (rank.Regret counts it 0): it is left out of the mean.
		r1, r5 := math.NaN(), math.NaN()
		if slices.Min(truth) < slices.Max(truth) {
			r1, r5 = rank.Regret(est, truth, 1), rank.Regret(est, truth, 5)
		}
		st.r1, st.r5 = append(st.r1, r1), append(st.r5, r5)
	}
}

// record returns the named estimator's record of a cell, nil if none.
func record(l *results.Line, name string) *results.Record {
	if l == nil {
		return nil
	}
	for j := range l.Records {
		if l.Records[j].Estimator == name {
			return &l.Records[j]
		}
	}
	return nil
}

// rankRows sets each row's rank by MSE, 1 the best; ties share the mean
// rank and rows without an MSE get none. MSEs equal to six decimals of
// their log10 tie: estimators that are one method (model-based and
// tabular fqe) differ only by rounding.
func rankRows(rows []Row) {
	var idx []int
	var v []float64
	for i, r := range rows {
		if r.Log10MSE != nil {
			idx = append(idx, i)
			v = append(v, math.Round(*r.Log10MSE*1e6)/1e6)
		}
	}
	for i := range v {
		v[i] = -v[i] // rank.Ranks gives 1 to the largest; here the smallest MSE
	}
	for k, rk := range rank.Ranks(v) {
		rows[idx[k]].Rank = num(rk)
	}
}

// overall averages each estimator's rows over the worlds where it ran:
// the normalised log10 MSE, the rank, the coverage and the ranking
// metrics (each over the worlds where it is defined).
func overall(worlds []WorldBoard) []Row {
	// The averaged fields of a row; their values over worlds go to
	// vals[estimator][field].
	fields := func(r *Row) []**float64 {
		return []**float64{&r.Log10NMSE, &r.Rank, &r.Coverage, &r.Spearman, &r.Regret1, &r.Regret5}
	}
	var names []string
	vals := map[string][][]float64{}
	rows := map[string]*Row{}
	for _, wb := range worlds {
		for _, r := range wb.Rows {
			row := rows[r.Estimator]
			if row == nil {
				row = &Row{Estimator: r.Estimator, Estimand: r.Estimand, Interval: r.Interval}
				rows[r.Estimator] = row
				vals[r.Estimator] = make([][]float64, len(fields(row)))
				names = append(names, r.Estimator)
			}
			row.Cells += r.Cells
			row.Failed += r.Failed
			if row.Estimand != r.Estimand {
				row.Estimand = "mixed"
			}
			row.Interval = joinKind(row.Interval, r.Interval)
			if r.Log10NMSE != nil {
				row.Worlds++
			}
			for k, p := range fields(&r) {
				if *p != nil && !math.IsNaN(**p) {
					vals[r.Estimator][k] = append(vals[r.Estimator][k], **p)
				}
			}
		}
	}
	out := make([]Row, 0, len(names))
	for _, name := range names {
		row := rows[name]
		for k, p := range fields(row) {
			*p = meanNum(vals[name][k])
		}
		out = append(out, *row)
	}
	slices.SortStableFunc(out, func(a, b Row) int {
		if a.Worlds != b.Worlds { // an estimator missing from some worlds goes last
			return b.Worlds - a.Worlds
		}
		if c := cmpNum(a.Rank, b.Rank); c != 0 {
			return c
		}
		return cmpNum(a.Log10NMSE, b.Log10NMSE)
	})
	return out
}

// Figure returns the data of the suite's figure (all worlds of the
// board for suite "all"): a panel whose categorical axis is the worlds
// and whose lines hold, per world and seed, each estimator's MSE over
// the family divided by the squared spread of the family's values, so
// that figure.Draw shows its mean over seeds with a band.
func (b *Board) Figure(suite string) (results.Panel, []results.Line) {
	p := results.Panel{
		Name:   suite,
		Title:  fmt.Sprintf("ihope benchmark, suite %s:\nevery estimator in every world, %d seeds", suite, b.Seeds),
		XName:  "world",
		XLabel: "world",
		YLabel: "MSE / (V_best − V_worst)²",
		Kind:   results.KindMSE,
	}
	var lines []results.Line
	for _, wb := range b.Worlds {
		if suite != All && wb.Suite != suite {
			continue
		}
		x := float64(len(p.Settings))
		tick := wb.World
		if len(p.Settings)%2 == 1 {
			tick = "\n" + tick // every other name a line lower: long names do not collide
		}
		p.Settings = append(p.Settings, results.Setting{ID: wb.World, X: x, Tick: tick})
		for s := range wb.Seeds {
			l := results.Line{Experiment: "benchmark", Panel: p.Name, Setting: wb.World, XName: "world",
				X: results.Float(x), Tick: tick, Seed: s, TruthMethod: "exact"}
			for _, r := range wb.Rows {
				if v := wb.nmse[r.Estimator]; s < len(v) {
					e := v[s]
					if e <= NMSEFloor {
						e = 0 // exact: package figure draws it on the bottom edge
					}
					l.Records = append(l.Records, results.Record{Estimator: r.Estimator,
						Estimate: results.Float(math.NaN()), SqError: results.Float(e)})
				}
			}
			lines = append(lines, l)
		}
	}
	return p, lines
}

// WriteMarkdown writes the leaderboard as Markdown tables.
func (b *Board) WriteMarkdown(out io.Writer) error {
	var sb strings.Builder
	mode := ""
	if b.Quick {
		mode = " (quick mode: small logs, three targets per world; a smoke test, not evidence)"
	}
	fmt.Fprintf(&sb, "# ihope benchmark leaderboard%s\n\n", mode)
	fmt.Fprintf(&sb, "Suites %s; %d seeds per cell; %d worlds. ", strings.Join(b.Suites, ", "), b.Seeds, len(b.Worlds))
	if b.Seconds > 0 {
		fmt.Fprintf(&sb, "Wall time %s (%d cells computed, %d found done). ", fmtSeconds(b.Seconds), b.Ran, b.Found)
	}
	var longRun []string
	for _, r := range b.Overall {
		if r.Estimand == "long-run" {
			longRun = append(longRun, r.Estimator)
		}
	}
	if len(longRun) == 0 {
		longRun = []string{"none"}
	}
	fmt.Fprintf(&sb, "Every estimator is asked for the horizon value and scored against the exact truth of the estimand its result states (the long-run value: %s). "+
		"Intervals: %g%% Wald intervals from the estimator's standard error where it gives one (dr), %g%% bootstrap intervals over episodes with %d resamples otherwise (percentile; mean ± t sd with fewer than 100). "+
		"Ranking: each seed's single log is used to estimate every policy of the world's family; Spearman's rank correlation with the true values, and the regret@k = (V_best − best true value among the k policies ranked highest)/(V_best − V_worst), averaged over seeds.\n\n",
		strings.Join(longRun, ", "), 100*b.Level, 100*b.Level, b.Resamples)
	fmt.Fprintf(&sb, "## Overall (mean over %d worlds)\n\n", len(b.Worlds))
	sb.WriteString("Ordered by rank, the mean rank by MSE within a world (1 = best). log10 nMSE: log10 of the MSE over the squared spread of the family's true values (V_best − V_worst)², averaged over worlds; an MSE below 1e-12 of the squared spread counts as exact and as −12. Coverage: the share of 90% intervals holding the truth, averaged over worlds.\n\n")
	sb.WriteString("| estimator | targets | log10 nMSE | rank | coverage | Spearman | regret@1 | regret@5 | failed | worlds |\n")
	sb.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range b.Overall {
		fmt.Fprintf(&sb, "| `%s` | %s | %s | %s | %s | %s | %s | %s | %d | %d |\n", r.Estimator, r.Estimand,
			f2(r.Log10NMSE), f1(r.Rank), pct(r.Coverage), f2(r.Spearman), f2(r.Regret1), f2(r.Regret5), r.Failed, r.Worlds)
	}
	for _, wb := range b.Worlds {
		fmt.Fprintf(&sb, "\n## %s: %s\n\n", wb.World, wb.Title)
		lo, hi := finiteRange(floats(wb.Truths))
		fmt.Fprintf(&sb, "Suite %s; n = %d episodes of T = %d steps, γ = %g, %d seeds (%s). Targets %s; exact horizon values %.4g to %.4g (spread %.4g).\n\n",
			wb.Suite, wb.Episodes, wb.Horizon, wb.Gamma, wb.Seeds, wb.Source, familyText(wb.Targets), lo, hi, float64(wb.Spread))
		sb.WriteString("| estimator | targets | log10 MSE | log10 nMSE | coverage | interval | Spearman | regret@1 | regret@5 | failed |\n")
		sb.WriteString("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n")
		for _, r := range wb.Rows {
			mse, nmse := f2(r.Log10MSE), f2(r.Log10NMSE)
			if r.Exact {
				mse, nmse = "exact", "exact"
			}
			fmt.Fprintf(&sb, "| `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", r.Estimator, r.Estimand,
				mse, nmse, pct(r.Coverage), r.Interval, f2(r.Spearman), f2(r.Regret1), f2(r.Regret5), r.Failed)
		}
	}
	_, err := io.WriteString(out, sb.String())
	return err
}

// familyText lists a family's names, shortened when long.
func familyText(names []string) string {
	if len(names) <= 4 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, %s, ..., %s (%d)", names[0], names[1], names[len(names)-1], len(names))
}

func floats(v []results.Float) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func fmtSeconds(s float64) string {
	if s < 120 {
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.1f min", s/60)
}

// joinKind combines interval kinds: the same, or "mixed".
func joinKind(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return "mixed"
}

func nanSlice(n int) []results.Float {
	v := make([]results.Float, n)
	for i := range v {
		v[i] = results.Float(math.NaN())
	}
	return v
}

// finiteRange returns the least and largest of the non-NaN values of v.
func finiteRange(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if !math.IsNaN(x) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	return lo, hi
}

// meanNum returns the mean of the non-NaN values, nil if there are none.
func meanNum(v []float64) *float64 {
	var ok []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	return num(stat.Mean(ok, nil))
}

// num returns a pointer to x, nil if x is not finite (null in JSON).
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// cmpNum orders numbers ascending, nil last.
func cmpNum(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

func f2(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *p)
}

func f1(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *p)
}

func pct(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100**p)
}
