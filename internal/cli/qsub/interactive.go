package qsub

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/interactive"
	"github.com/gopbs/gopbs/internal/x11"
	"github.com/gopbs/gopbs/proto"
)

// qsub -I, as OpenPBS's: qsub listens on a port of its host (on the
// addresses the shepherd dials, with strangers bounded: listen.go) and submits
// the job with that port and a secret only it, the server and the job's
// mom learn (proto.InteractiveSession); it says "waiting for job N to
// start" and, while it waits, asks the server now and then whether the
// job still exists. When the job starts, its shepherd connects to qsub,
// each proves it holds the secret (internal/interactive), and qsub says
// "job N ready" and relays the user's terminal, in raw mode, to the
// shell's pseudo-terminal: what the user types (^C and ^Z included, as
// bytes the job's terminal turns into signals), the window's size, and
// the shell's output back. Standard input that is not a terminal is sent
// as commands for the shell, and its end ends the shell's input. The
// shell's exit ends the job, and its exit status is qsub's; qsub going
// away (killed, or its terminal gone) ends the job.

// Window size when the terminal does not say (OpenPBS's).
var defaultWinsize = interactive.Winsize{Rows: 20, Cols: 80}

// interactiveSession is what the wait hands the relay: the shepherd's
// proven connection.
type interactiveSession struct {
	nc net.Conn
	fc *interactive.Conn
}

// runInteractive submits sub's job as an interactive job and relays its
// shell; it returns qsub's exit status.
// With display (qsub -X) the job's X clients are shown there.
func runInteractive(env *cmdutil.Env, req *proto.SubmitRequest, display *x11.Display, client submitter, sys system) int {
	// The shepherd dials the job's submit host, the name the server
	// knows this host by: its addresses are the ones to listen on.
	me, err := client.WhoAmI()
	if err != nil {
		return env.Fail(err)
	}
	if me.Host == "" {
		return env.Fail(errors.New("cannot listen for the interactive job: the server did not say which host it knows this one as"))
	}
	ln, err := listenFor(me.Host, sys.lookupIP)
	if err != nil {
		return env.Fail(err)
	}
	defer ln.Close()
	cookie := make([]byte, proto.InteractiveCookieLen)
	if _, err := rand.Read(cookie); err != nil {
		return env.Fail(fmt.Errorf("cannot make the interactive job's secret: %w", err))
	}
	req.Interactive = &proto.InteractiveSession{Port: ln.port, Cookie: cookie}
	id, err := client.Submit(req)
	if err != nil {
		return env.Fail(err)
	}
	fmt.Fprintf(env.Stdout, "qsub: waiting for job %s to start\n", id)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	sess, client, code, done := awaitShepherd(env, ln, id, cookie, client, sys, sigs)
	signal.Stop(sigs)
	defer func() { client.Close() }()
	if done {
		return code
	}
	ln.Close()
	status, ended := relay(env, sess, id, sys.ctx.Stdin, display)
	fmt.Fprintf(env.Stdout, "\nqsub: job %s completed\n", id)
	if ended {
		return status
	}
	// The connection broke before the exit status came: the job ends
	// without its terminal, and the server tells how.
	env.Errorf("lost the connection to job %s; waiting for its end", id)
	status, c, err := waitJob(id, client, sys.connect, sys.clock)
	client = c
	if err != nil {
		return env.Fail(err)
	}
	return status
}

// awaitShepherd waits for the job's shepherd to connect and prove
// itself. It returns done (with qsub's exit status) when the job ended
// without connecting or qsub was told to stop waiting (the job is then
// deleted, as OpenPBS's qsub deletes it).
func awaitShepherd(env *cmdutil.Env, ln *listeners, id string, cookie []byte, client submitter, sys system, sigs <-chan os.Signal) (*interactiveSession, submitter, int, bool) {
	proven := make(chan *interactiveSession, 1)
	strangers := newStrangers()
	for _, l := range ln.lns {
		go acceptShepherd(l, strangers, id, cookie, proven)
	}
	delay := firstPoll
	poll := time.NewTimer(delay)
	defer poll.Stop()
	for {
		select {
		case s := <-proven:
			return s, client, 0, false
		case sig := <-sigs:
			n := int(sig.(syscall.Signal))
			env.Errorf("wait for job %s interrupted by signal %d", id, n)
			fmt.Fprintf(env.Stdout, "Job %s is being deleted\n", id)
			if err := client.DeleteJob(id, proto.DeleteOptions{}); err != nil {
				return nil, client, env.Fail(err), true
			}
			return nil, client, 2, true
		case <-poll.C:
			gone, why, c := jobGone(id, client, sys.connect)
			client = c
			if gone {
				// OpenPBS's words: deleted, or ended without starting
				// (the server's comment says why, when it has one).
				if why != "" {
					why = " (" + why + ")"
				}
				env.Errorf("job %s apparently deleted%s", id, why)
				return nil, client, 1, true
			}
			delay = min(delay*2, maxPoll)
			poll.Reset(delay)
		}
	}
}

// jobGone asks the server whether the job is finished (and its comment)
// or unknown; a server it cannot reach is asked again next time.
func jobGone(id string, client submitter, connect func() (submitter, error)) (bool, string, submitter) {
	st, errs, err := client.StatusJobs(&proto.StatusRequest{IDs: []string{id}, Attrs: []string{proto.AttrJobState, proto.AttrComment}, History: true})
	switch {
	case err != nil:
		client.Close()
		if c, cerr := connect(); cerr == nil {
			client = c
		}
		return false, "", client
	case len(errs) > 0:
		return errs[0].Code == proto.PBSE_UNKJOBID, "", client
	case len(st) == 1:
		state, _ := st[0].Get(proto.AttrJobState)
		why, _ := st[0].Get(proto.AttrComment)
		return state == "F", why, client
	}
	return false, "", client
}

// relay connects the user's standard input and output to the job until
// its exit status comes (ended) or the connection breaks.
func relay(env *cmdutil.Env, s *interactiveSession, id string, stdin io.Reader, display *x11.Display) (status int, ended bool) {
	defer s.nc.Close()
	in, _ := stdin.(*os.File)
	tty := in != nil && isTerminal(in)
	setup := interactive.Frame{Kind: interactive.KindSetup, Tty: tty, X11: display != nil, Size: defaultWinsize, Term: os.Getenv("TERM")}
	var xr *x11Relay
	if display != nil {
		xr = newX11Relay(*display, s.fc, func(msg string) { env.Errorf("%s", msg) })
		defer xr.chans.Close()
	}
	if tty {
		if ws, ok := winsize(in); ok {
			setup.Size = ws
		}
	}
	if err := s.fc.Send(&setup); err != nil {
		env.Errorf("job %s: %v", id, err)
		return 0, false
	}
	fmt.Fprintf(env.Stdout, "qsub: job %s ready\n\n", id)
	raw := false
	var suspend func()
	if tty {
		restore, err := makeRaw(in)
		if err != nil {
			env.Errorf("cannot put the terminal in raw mode: %v", err)
		} else {
			raw = true
			defer func() { restore() }()
			// ~^Z: qsub stops with the terminal as it found it; fg
			// takes the session up again.
			suspend = func() {
				restore()
				syscall.Kill(0, syscall.SIGTSTP)
				if r, err := makeRaw(in); err == nil {
					restore = r
				}
				if ws, ok := winsize(in); ok {
					s.fc.Send(&interactive.Frame{Kind: interactive.KindWinsize, Size: ws})
				}
			}
		}
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go func() {
			for range winch {
				if ws, ok := winsize(in); ok {
					s.fc.Send(&interactive.Frame{Kind: interactive.KindWinsize, Size: ws})
				}
			}
		}()
	}
	// A signal that ends qsub ends the job: the connection closes, and
	// the terminal is restored on the way out.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(stop)
	go func() {
		if _, ok := <-stop; ok {
			s.nc.Close()
		}
	}()
	if stdin != nil {
		go sendInput(env, s, id, stdin, tty, suspend)
	} else {
		s.fc.Send(&interactive.Frame{Kind: interactive.KindEOF})
	}
	for {
		f, err := s.fc.Recv()
		if err != nil {
			return 0, false
		}
		switch f.Kind {
		case interactive.KindData:
			env.Stdout.Write(f.Data)
		case interactive.KindStderr:
			env.Stderr.Write(f.Data)
		case interactive.KindNotice:
			msg := string(f.Data) + "\n"
			if raw {
				msg = "\r\n" + string(f.Data) + "\r\n"
			}
			io.WriteString(env.Stderr, msg)
		case interactive.KindExit:
			return f.Status, true
		case interactive.KindX11Open:
			if xr != nil {
				xr.open(f.Channel)
			}
		case interactive.KindX11Data:
			if xr != nil {
				xr.chans.Write(f.Channel, f.Data)
			}
		case interactive.KindX11Close:
			if xr != nil {
				xr.chans.End(f.Channel, false)
			}
		}
	}
}

// sendInput relays standard input to the job. The end of a terminal's
// input means the terminal is gone: the connection closes and the job
// ends. The end of other input ends the shell's input, and the shell's
// exit the job. A terminal's input is read for OpenPBS's escapes
// (escape.go): "~." closes the connection (the job ends), "~^Z" calls
// suspend (nil: not in raw mode, the escape is sent as typed).
func sendInput(env *cmdutil.Env, s *interactiveSession, id string, stdin io.Reader, tty bool, suspend func()) {
	buf := make([]byte, interactive.MaxData)
	var esc escaper
	for {
		n, err := stdin.Read(buf)
		data := buf[:n]
		for tty && suspend != nil && len(data) > 0 {
			out, act, rest := esc.scan(data)
			if len(out) > 0 && s.fc.SendData(interactive.KindData, out) != nil {
				return
			}
			switch act {
			case escDisconnect:
				io.WriteString(env.Stderr, "\r\nqsub: job "+id+": session closed (~.): the job ends\r\n")
				s.nc.Close()
				return
			case escSuspend:
				suspend()
			}
			data = rest
		}
		if len(data) > 0 && s.fc.SendData(interactive.KindData, data) != nil {
			return
		}
		if err != nil {
			if tty {
				s.nc.Close()
				return
			}
			s.fc.Send(&interactive.Frame{Kind: interactive.KindEOF})
			return
		}
	}
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func winsize(f *os.File) (interactive.Winsize, bool) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Row == 0 || ws.Col == 0 {
		return interactive.Winsize{}, false
	}
	return interactive.Winsize{Rows: ws.Row, Cols: ws.Col, X: ws.Xpixel, Y: ws.Ypixel}, true
}

// makeRaw puts the terminal in raw mode (cfmakeraw(3)): every byte the
// user types goes to the job's terminal, whose own settings interpret
// it. restore puts the settings back.
func makeRaw(f *os.File) (restore func(), err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &t); err != nil {
		return nil, err
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}
