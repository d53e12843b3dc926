package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/internal/words"
)

// The HTML report of demo's data: estimate --report on the logs sample
// writes for demo's defaults (with the target's whole distribution, so
// that every estimator the demo runs, but the on-policy oracle, runs).
// The page holds each estimator's name and the estimate demo computes,
// the command line, the data summary and the warnings; it asks for
// nothing from the network; and, when Chromium is installed, a headless
// Chromium shows its tables and draws every figure.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := run(t, "demo", "--json")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var demo demoReport
	if err := json.Unmarshal([]byte(out), &demo); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "--target-probs", "--out", logs); code != ExitOK {
		t.Fatal(errOut)
	}
	page := filepath.Join(dir, "report.html")
	// Every estimator the demo ran, the ones left out of estimate's
	// default set (ope.Entry.Default) included.
	var names []string
	for _, row := range demo.Rows {
		if row.Estimator != "on-policy" {
			names = append(names, row.Estimator)
		}
	}
	args := []string{"estimate", "--data", logs, "--bootstrap", "20", "--report", page, "--json", "--estimators", strings.Join(names, ",")}
	out, errOut, code = run(t, args...)
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var rep evaluate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)

	t.Run("contents", func(t *testing.T) {
		n := 0
		for _, row := range demo.Rows {
			if row.Estimator == "on-policy" {
				continue // an oracle that needs the simulator
			}
			n++
			if row.Estimate == nil {
				t.Errorf("demo: %s failed", row.Estimator)
				continue
			}
			cell := fmt.Sprintf(`<td class="num">%s</td>`, words.Num("%.6g", *row.Estimate))
			if !strings.Contains(html, "<code>"+row.Estimator+"</code>") || !strings.Contains(html, cell) {
				t.Errorf("the report lacks %s or its estimate %s", row.Estimator, cell)
			}
		}
		if len(rep.Estimates) != n {
			t.Errorf("%d rows, demo has %d estimators besides the oracle", len(rep.Estimates), n)
		}
		for _, w := range rep.Warnings {
			if !strings.Contains(html, escaped(t, w)) {
				t.Errorf("the report lacks the warning %q", w)
			}
		}
		for _, want := range []string{
			"ihope " + strings.Join(args, " "), // the exact command line
			"<th>episodes</th><td>200, of 400 to 400 steps</td>",
			`class="plot forest"`,
			"wis-stepwise: ESS 5656.7 of 80000 steps", // a weight histogram's title
		} {
			if !strings.Contains(html, want) {
				t.Errorf("the report lacks %q", want)
			}
		}
		// Self-contained: no script, no external resource, and a policy
		// that lets the page load nothing from anywhere.
		if !strings.Contains(html, `content="default-src 'none';`) {
			t.Error("no content security policy")
		}
		for _, bad := range []string{"<script", "<link", "<iframe", "<img", "src=\"http", "href=\"http", "url(http", "@import"} {
			if strings.Contains(html, bad) {
				t.Errorf("the report contains %q", bad)
			}
		}
		for _, u := range regexp.MustCompile(`https?://[^"' )<>]+`).FindAllString(html, -1) {
			if u != "http://www.w3.org/2000/svg" && u != "http://www.w3.org/1999/xlink" { // XML namespaces, never fetched
				t.Errorf("the report names %s", u)
			}
		}
	})

	t.Run("chromium", func(t *testing.T) {
		browser := findChromium()
		if browser == "" {
			t.Skip("no Chromium on PATH (apt-get install chromium): the report is not rendered")
		}
		checkRendered(t, browser, page, len(rep.Estimates))
	})
}

// escaped returns s as html/template writes it in a page's text.
func escaped(t *testing.T, s string) string {
	var b bytes.Buffer
	if err := htmltemplate.Must(htmltemplate.New("").Parse("{{.}}")).Execute(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// findChromium returns the path of a Chromium (or Chrome) binary, or "".
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chromium runs a headless Chromium with no network (every host
// unresolvable, every request sent to a dead proxy) and a profile of its
// own, and returns its standard output.
func chromium(t *testing.T, browser string, args ...string) []byte {
	t.Helper()
	// A guard against a browser that hangs, not a limit on its speed.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
		"--hide-scrollbars", "--force-device-scale-factor=1", "--window-size=1200,900"}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", browser, args, err, stderr.String())
	}
	return out
}

// boxScript measures, in a copy of the page, where Chromium lays out each
// table and figure, and the page's height: the screenshot of the same
// copy is then cut into them.
const boxScript = `<script>
(function () {
  var out = ["height " + document.documentElement.scrollHeight];
  document.querySelectorAll("table, figure.plot svg").forEach(function (e) {
    var r = e.getBoundingClientRect();
    out.push([e.tagName.toLowerCase(), e.closest("figure") ? e.closest("figure").className : e.className,
      Math.round(r.left + window.scrollX), Math.round(r.top + window.scrollY), Math.round(r.width), Math.round(r.height)].join(" "));
  });
  var pre = document.createElement("pre");
  pre.id = "boxes";
  pre.textContent = out.join("\n");
  document.body.appendChild(pre);
})();
</script>`

type box struct {
	tag, class string
	r          image.Rectangle
}

// checkRendered renders the report in Chromium: its DOM holds the
// estimates table with every estimator, and in a screenshot every table
// and figure is drawn, not blank.
func checkRendered(t *testing.T, browser, page string, rows int) {
	dom := string(chromium(t, browser, "--dump-dom", "file://"+page))
	if n := strings.Count(dom, "<tr"); n < rows+1 {
		t.Errorf("the rendered page has %d table rows, want at least %d", n, rows+1)
	}
	figures := strings.Count(dom, "<svg")
	if figures < 2 {
		t.Errorf("the rendered page has %d figures", figures)
	}

	// A copy that measures itself: the same page, with the script
	// allowed by its policy.
	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := strings.Replace(string(src), "default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';", 1)
	html = strings.Replace(html, "</body>", boxScript+"</body>", 1)
	copyPath := filepath.Join(t.TempDir(), "measured.html")
	if err := os.WriteFile(copyPath, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	boxes, height := parseBoxes(t, string(chromium(t, browser, "--dump-dom", "file://"+copyPath)))
	if got := countTag(boxes, "svg"); got != figures {
		t.Errorf("measured %d figures, the page has %d", got, figures)
	}
	t.Logf("measured %d tables and %d figures on a page %d pixels high", countTag(boxes, "table"), countTag(boxes, "svg"), height)
	shot := filepath.Join(t.TempDir(), "page.png")
	chromium(t, browser, "--screenshot="+shot, fmt.Sprintf("--window-size=1200,%d", height+50), "file://"+copyPath)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range boxes {
		ink, colour := inked(img, b.r)
		area := b.r.Dx() * b.r.Dy()
		switch {
		case area == 0:
			t.Errorf("%s %s at %v has no size", b.tag, b.class, b.r)
		case ink*200 < area: // under 0.5% drawn
			t.Errorf("%s %s at %v is blank: %d of %d pixels drawn", b.tag, b.class, b.r, ink, area)
		case b.tag == "svg" && colour < 20: // axes and text only: no estimate drawn
			t.Errorf("figure %s at %v has %d coloured pixels: nothing of the data is drawn", b.class, b.r, colour)
		}
	}
	if t.Failed() {
		keep := filepath.Join(os.TempDir(), "ihope-report-test.png")
		if data, err := os.ReadFile(shot); err == nil && os.WriteFile(keep, data, 0o644) == nil {
			t.Logf("screenshot kept in %s", keep)
		}
	}
}

func parseBoxes(t *testing.T, dom string) ([]box, int) {
	t.Helper()
	start := strings.Index(dom, `<pre id="boxes">`)
	if start < 0 {
		t.Fatal("the measuring copy did not run its script")
	}
	text := dom[start+len(`<pre id="boxes">`):]
	text = text[:strings.Index(text, "</pre>")]
	var boxes []box
	height := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "height" {
			height, _ = strconv.Atoi(f[1])
			continue
		}
		if len(f) < 5 {
			continue
		}
		n := make([]int, 4)
		for i := range n {
			n[i], _ = strconv.Atoi(f[len(f)-4+i])
		}
		class := strings.Join(f[1:len(f)-4], " ")
		boxes = append(boxes, box{tag: f[0], class: class, r: image.Rect(n[0], n[1], n[0]+n[2], n[1]+n[3])})
	}
	if height == 0 || len(boxes) == 0 {
		t.Fatalf("no measurements in %q", text)
	}
	return boxes, height
}

func countTag(boxes []box, tag string) int {
	n := 0
	for _, b := range boxes {
		if b.tag == tag {
			n++
		}
	}
	return n
}

// inked counts the pixels of r that are not near-white, and those of
// them that are coloured (not grey).
func inked(img image.Image, r image.Rectangle) (ink, colour int) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			R, G, B := int(cr>>8), int(cg>>8), int(cb>>8)
			if R+G+B < 3*235 {
				ink++
			}
			if max(R, G, B)-min(R, G, B) > 60 {
				colour++
			}
		}
	}
	return ink, colour
}

// A report of one named policy with a bare reference: the policy's rows,
// and the reference in its heading and forest plot.
func TestReportOnePolicy(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "--out", logs, "-n", "20", "-T", "30"); code != ExitOK {
		t.Fatal(errOut)
	}
	files := writePolicies(t, dir, "pi19")
	page := filepath.Join(dir, "one.html")
	rep := estimateJSON(t, "--data", logs, "--bootstrap", "0", "--estimators", "wis-stepwise,fqe",
		"--target-policy", files[0], "--reference=-0.14118", "--report", page)
	if len(rep.Policies) != 1 || rep.Policies[0].Name != "pi19" || rep.Policies[0].Reference == nil || *rep.Policies[0].Reference != -0.14118 {
		t.Fatalf("policies %+v", rep.Policies)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"target policy pi19 (", "reference value -0.14118", "<code>wis-stepwise</code>", "<code>fqe</code>", ">reference -0.14118<"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, row := range rep.Estimates {
		if !strings.Contains(html, fmt.Sprintf(`<td class="num">%s</td>`, words.Num("%.6g", *row.Estimate))) {
			t.Errorf("the report lacks %s's estimate", row.Estimator)
		}
	}
}

// Two runs with the same seeds write the same bytes, to --json and to the
// report, in memory and streamed: the estimators' times are left out
// unless --timings puts them back.
func TestEstimateSameBytes(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.csv")
	d := sampleLogs(t, logs, "-n", "20", "-T", "100", "--target-probs")
	shards := filepath.Join(dir, "shards")
	if err := os.Mkdir(shards, 0o755); err != nil {
		t.Fatal(err)
	}
	writeShards(t, shards, d, 2)
	once := func(data string, extra ...string) (string, string) {
		t.Helper()
		page := filepath.Join(dir, "report.html")
		os.Remove(page)
		args := append([]string{"estimate", "--data", data, "--json", "--bootstrap", "20",
			"--estimators", "wis-stepwise,bch-tabular,fqe"}, extra...)
		if data == logs {
			args = append(args, "--report", page)
		}
		out, errOut, code := run(t, args...)
		if code != ExitOK {
			t.Fatalf("%q: %s", args, errOut)
		}
		b, _ := os.ReadFile(page)
		return out, string(b)
	}
	for _, data := range []string{logs, shards} {
		out1, page1 := once(data)
		out2, page2 := once(data)
		if out1 != out2 || page1 != page2 {
			t.Errorf("%s: two runs with the same seeds differ:\n%s\n%s", data, out1, out2)
		}
		if strings.Contains(out1, `"seconds"`) || strings.Contains(page1, "<th>time</th>") {
			t.Errorf("%s: times without --timings", data)
		}
		out3, page3 := once(data, "--timings")
		if !strings.Contains(out3, `"seconds"`) || (data == logs && !strings.Contains(page3, "<th>time</th>")) {
			t.Errorf("%s: --timings left out the times", data)
		}
	}
}

// --json's warnings are [] when there are none, never null (also with
// the behavior's own lines, estimate_behavior.go), and an estimate
// outside the logged rewards' range is warned about: two one-step
// episodes both take action 0 (reward 1) at pi/pi0 = 2, so is-trajectory
// overshoots to 2.
func TestEstimateWarningsJSON(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs.csv")
	csv := "episode,t,state,action,reward,next_state,behavior_prob,target_prob\n" +
		"a,0,0,0,1,0,0.5,1\nb,0,0,0,1,0,0.5,1\n"
	if err := os.WriteFile(logs, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "estimate", "--data", logs, "--json", "--bootstrap", "0", "--estimators", "naive")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	if !strings.Contains(out, `"warnings":[]`) {
		t.Errorf("no warnings should print as []: %s", out)
	}
	rep := estimateJSON(t, "--data", logs, "--bootstrap", "0", "--estimators", "naive,is-trajectory")
	if v := rowsByName(rep)["is-trajectory"].Estimate; v == nil || *v != 2 {
		t.Fatalf("is-trajectory: %v, want 2", v)
	}
	var found []string
	for _, w := range rep.Warnings {
		if strings.Contains(w, "outside the range of the logged rewards") {
			found = append(found, w)
		}
	}
	if len(found) != 1 || !strings.HasPrefix(found[0], "is-trajectory: the estimate 2 lies outside") {
		t.Errorf("range warnings %q, want one for is-trajectory", found)
	}
}
