package mom

import (
	"os/user"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
)

// rawMessage is an encoded body sent as is.
type rawMessage = msgpack.RawMessage

func userName(uid uint32) (string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return "", err
	}
	return u.Username, nil
}
