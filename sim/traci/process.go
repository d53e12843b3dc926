package traci

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNotFound is returned by Start and LookPath when the sumo binary is
// not installed; its text tells how to install it.
var ErrNotFound = errors.New("sumo not found: apt-get install -y sumo")

// LookPath returns the path of the SUMO binary name ("sumo" if empty) or
// an error wrapping ErrNotFound.
func LookPath(name string) (string, error) {
	if name == "" {
		name = "sumo"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if name == "sumo" {
			return "", ErrNotFound
		}
		return "", fmt.Errorf("%w (%v)", ErrNotFound, err)
	}
	return p, nil
}

// Options configure Start.
type Options struct {
	// Binary is the SUMO executable; if empty, "sumo" is looked up in
	// PATH.
	Binary string
	// Args are SUMO's arguments (network, routes, additional files,
	// options). Start appends --remote-port and, unless present,
	// --no-step-log.
	Args []string
	// Dir is SUMO's working directory; if empty, the current one.
	Dir string
	// Timeout bounds the wait for SUMO to accept the connection; if 0,
	// 30 s.
	Timeout time.Duration
}

// Process is a SUMO simulator started by Start, with its TraCI client.
// Close it (always: defer p.Close()) to end the simulation and reap the
// process.
type Process struct {
	*Client
	// API is the TraCI API version SUMO reported, Ident its version
	// string ("SUMO 1.15.0").
	API   int
	Ident string

	cmd     *exec.Cmd
	port    int
	done    chan struct{}
	waitErr error
	killed  atomic.Bool
	out     *tail

	closeOnce sync.Once
	closeErr  error
}

// Start launches SUMO with opts.Args and --remote-port on a free loopback
// port, connects to it with retries and checks the version. SUMO runs in
// its own process group; cancelling ctx kills the group at any time during
// the process's life, and on Linux SUMO also receives SIGKILL if the
// calling program dies. Choosing the port and starting SUMO on it happen
// under a lock shared by this package's users on the machine (lockPorts);
// if the port is taken between choosing it and SUMO binding it anyway (by
// another program), Start tries another one (three attempts).
func Start(ctx context.Context, opts Options) (*Process, error) {
	bin, err := LookPath(opts.Binary)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		unlock := lockPorts()
		port, err := freePort()
		if err != nil {
			unlock()
			return nil, err
		}
		p, err := launch(ctx, bin, port, opts)
		unlock()
		if err == nil || !errors.Is(err, errPortBusy) || attempt == 2 {
			return p, err
		}
	}
}

var errPortBusy = errors.New("port in use")

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("traci: find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port, nil
}

func launch(ctx context.Context, bin string, port int, opts Options) (*Process, error) {
	args := append([]string(nil), opts.Args...)
	if !hasArg(args, "--no-step-log") {
		args = append(args, "--no-step-log")
	}
	args = append(args, "--remote-port", strconv.Itoa(port))
	p := &Process{port: port, done: make(chan struct{}), out: &tail{max: 16 << 10}}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = opts.Dir
	cmd.Env = Env()
	cmd.Stdout, cmd.Stderr = p.out, p.out
	setProcAttr(cmd)
	cmd.Cancel = func() error {
		p.killed.Store(true)
		return killGroup(cmd)
	}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("traci: start %s: %w", bin, err)
	}
	p.cmd = cmd
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()

	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var conn net.Conn
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn = c
			break
		}
		select {
		case <-p.done:
			out := p.out.String()
			if strings.Contains(out, "in use") || strings.Contains(out, "bind") {
				return nil, fmt.Errorf("traci: port %d: %w", port, errPortBusy)
			}
			return nil, fmt.Errorf("traci: sumo exited before accepting a connection (%v)%s", p.waitErr, p.lastOutput())
		case <-ctx.Done():
			p.Kill()
			return nil, fmt.Errorf("traci: start sumo: %w", ctx.Err())
		case <-deadline.C:
			p.Kill()
			return nil, fmt.Errorf("traci: sumo did not accept a connection on port %d within %v%s", port, timeout, p.lastOutput())
		case <-time.After(delay):
		}
	}
	p.Client = NewClient(conn)
	p.Client.decorate = p.decorate
	api, ident, err := p.Client.Version()
	if err != nil {
		p.Kill()
		return nil, fmt.Errorf("traci: version handshake: %w", err)
	}
	p.API, p.Ident = api, ident
	return p, nil
}

// Env returns the environment for SUMO's programs: the current one, with
// SUMO_HOME set to /usr/share/sumo (where Debian's package puts SUMO's
// data) when it is unset and that directory exists, which silences SUMO's
// warning about it.
func Env() []string {
	env := os.Environ()
	if os.Getenv("SUMO_HOME") == "" {
		if st, err := os.Stat("/usr/share/sumo"); err == nil && st.IsDir() {
			env = append(env, "SUMO_HOME=/usr/share/sumo")
		}
	}
	return env
}

func hasArg(args []string, a string) bool {
	for _, x := range args {
		if x == a || strings.HasPrefix(x, a+"=") {
			return true
		}
	}
	return false
}

// decorate adds SUMO's exit status and last output to an I/O error when
// the process has ended (it waits briefly, as the socket usually breaks
// just before the process is reaped).
func (p *Process) decorate(err error) error {
	select {
	case <-p.done:
	case <-time.After(200 * time.Millisecond):
		return err
	}
	return fmt.Errorf("%w (sumo exited: %v)%s", err, p.waitErr, p.lastOutput())
}

func (p *Process) lastOutput() string {
	s := strings.TrimSpace(p.out.String())
	if s == "" {
		return ""
	}
	return "; sumo said: " + strings.Join(strings.Fields(s), " ")
}

// Pid returns SUMO's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Port returns the loopback port SUMO listens on.
func (p *Process) Port() int { return p.port }

// Output returns the last 16 KiB SUMO wrote to stdout and stderr.
func (p *Process) Output() string { return p.out.String() }

// Done is closed when the SUMO process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill kills SUMO's process group and waits until the process is reaped.
// It is safe to call at any time, also after Close.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.killed.Store(true)
	killGroup(p.cmd)
	<-p.done
	if p.Client != nil {
		p.Client.conn.Close()
	}
}

// Close ends the simulation (TraCI close), closes the connection and
// waits for SUMO to exit, killing it after 5 s. It returns an error if the
// close command failed or SUMO exited with a failure it was not killed
// for. Close is safe to call more than once and after Kill.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		var err error
		select {
		case <-p.done:
		default:
			err = p.Client.Close()
		}
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			p.Kill()
		}
		p.Client.conn.Close()
		if p.waitErr != nil && !p.killed.Load() {
			err = fmt.Errorf("traci: sumo exited: %w%s", p.waitErr, p.lastOutput())
		}
		if p.killed.Load() {
			err = nil
		}
		p.closeErr = err
	})
	return p.closeErr
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
