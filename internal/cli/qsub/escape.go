// OpenPBS's escapes of qsub -I, read from a terminal: at the start of a
// line, "~." ends the session (and the job), "~" then ^Z suspends qsub
// (the job runs on; fg resumes the session), "~~" sends one "~"; any
// other character after "~" sends both. As in rlogin and ssh, from which
// they come.

package qsub

// escAction is what the user's input asks qsub itself to do.
type escAction uint8

const (
	escNone escAction = iota
	escDisconnect
	escSuspend
)

// escaper finds the escapes in a terminal's input, across reads.
type escaper struct {
	midLine bool // the last byte sent was not the end of a line
	tilde   bool // a "~" at the start of a line is held back
}

// scan returns the bytes of in to send to the job and the first escape
// found; the bytes after an escape are left for the next call (rest).
func (e *escaper) scan(in []byte) (out []byte, act escAction, rest []byte) {
	for i, b := range in {
		if e.tilde {
			e.tilde = false
			switch b {
			case '.':
				return out, escDisconnect, in[i+1:]
			case 0x1a: // ^Z
				return out, escSuspend, in[i+1:]
			case '~':
				out = append(out, '~')
				e.midLine = true
				continue
			}
			out = append(out, '~')
		} else if b == '~' && !e.midLine {
			e.tilde = true
			continue
		}
		out = append(out, b)
		e.midLine = b != '\r' && b != '\n'
	}
	return out, escNone, nil
}
