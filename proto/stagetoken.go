package proto

import (
	"crypto/hmac"
	"crypto/sha256"
)

// Directions of a staged file, as a token binds them.
const (
	StageGet = "get" // a mom reads the file from another mom (stage-in)
	StagePut = "put" // a mom writes the file to another mom (stage-out)
)

// StageToken is the server's grant to read (StageGet) or write (StagePut)
// one file, path, on another mom's host as user, for the staging of job
// jobID. The mom that serves a FileRequest computes it again with the
// cluster key and refuses a request whose token differs: the channel
// serves only files the server put in a job's staging list, as that job's
// owner, in that direction. Fields are separated by NUL, which none of
// them can hold.
func StageToken(key []byte, jobID, user, direction, path string) []byte {
	m := hmac.New(sha256.New, key)
	for _, s := range []string{"gopbs stage token v1", jobID, user, direction, path} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// ValidStageToken reports whether token is StageToken of the rest, in
// constant time.
func ValidStageToken(key, token []byte, jobID, user, direction, path string) bool {
	return hmac.Equal(token, StageToken(key, jobID, user, direction, path))
}
