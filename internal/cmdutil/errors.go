package cmdutil

import (
	"errors"
	"strings"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// torqueUnknownJob is Torque's wording of PBSE_UNKJOBID; bpipe's regex and
// Torque users expect it ("qdel: Unknown Job Id Error 12.srv").
const torqueUnknownJob = "Unknown Job Id Error"

// JobError rephrases a per-job failure for the personality, ready to be
// printed as "<cmd>: <message> <id>" (cmdutil.Env.JobError). The code is
// kept, so the exit status is unchanged. Torque says "Unknown Job Id
// Error" where OpenPBS says "Unknown Job Id", and a server text that
// already ends with the id loses it so that the id is not printed twice.
// Errors without a PBSE code are returned as they are.
func JobError(p config.Personality, err error, id string) error {
	var pe *proto.Error
	if !errors.As(err, &pe) {
		return err
	}
	return &proto.Error{Code: pe.Code, Text: ErrorText(p, pe.Code, pe.Text, id)}
}

// ErrorText is the message for a failed operand (a job id, queue or
// destination) with code and server text, as JobError words it.
func ErrorText(p config.Personality, code proto.Code, text, id string) string {
	text = strings.TrimRight(text, " ")
	if id != "" {
		text = strings.TrimRight(strings.TrimSuffix(text, id), " ")
	}
	if text == "" {
		text = strings.TrimRight(code.Message(), " ")
	}
	if p == config.Torque && code == proto.PBSE_UNKJOBID && text == strings.TrimRight(proto.PBSE_UNKJOBID.Message(), " ") {
		text = torqueUnknownJob
	}
	if text == "" {
		text = (&proto.Error{Code: code}).Error()
	}
	return text
}

// FullJobID is the id PBS prints for an operand in an error: a bare
// sequence number ("123", "123[]", "123[4]") gets the server name
// appended, as PBS completes it before asking; anything else is shown as
// given.
func FullJobID(id, server string) string {
	if server == "" || !bareSeq(id) {
		return id
	}
	return id + "." + server
}

func bareSeq(id string) bool {
	i := 0
	for i < len(id) && id[i] >= '0' && id[i] <= '9' {
		i++
	}
	if i == 0 {
		return false
	}
	rest := id[i:]
	if rest == "" {
		return true
	}
	if rest[0] != '[' || rest[len(rest)-1] != ']' {
		return false
	}
	for _, c := range rest[1 : len(rest)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
