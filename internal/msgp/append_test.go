package msgp

import (
	"bytes"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// FuzzAppend checks every Append function against msgpack's encoder with
// compact integers: the same bytes.
func FuzzAppend(f *testing.F) {
	f.Add("x", []byte("y"), int64(-33), uint64(300), true, uint16(16))
	f.Add("", []byte(nil), int64(1)<<40, uint64(1)<<63, false, uint16(65535))
	f.Fuzz(func(t *testing.T, s string, raw []byte, i int64, u uint64, v bool, n uint16) {
		long := string(bytes.Repeat([]byte(s+"."), int(n%700)))
		var want bytes.Buffer
		enc := msgpack.NewEncoder(&want)
		enc.UseCompactInts(true)
		var got []byte
		for _, str := range []string{s, long} {
			enc.EncodeString(str)
			got = AppendString(got, str)
		}
		enc.EncodeBytes(raw)
		got = AppendBytes(got, raw)
		enc.EncodeInt(i)
		got = AppendInt(got, i)
		enc.EncodeInt(-int64(n))
		got = AppendInt(got, -int64(n))
		enc.EncodeUint(u)
		got = AppendUint(got, u)
		enc.EncodeUint(uint64(n))
		got = AppendUint(got, uint64(n))
		enc.EncodeBool(v)
		got = AppendBool(got, v)
		enc.EncodeNil()
		got = AppendNil(got)
		for _, k := range []int{int(n % 20), int(n), int(n) << 8} {
			enc.EncodeArrayLen(k)
			got = AppendArrayLen(got, k)
			enc.EncodeMapLen(k)
			got = AppendMapLen(got, k)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("\n got % x\nwant % x", got, want.Bytes())
		}
	})
}
