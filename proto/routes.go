package proto

import "github.com/vmihailenco/msgpack/v5"

// Routes is how a daemon serves requests: one table from each request type
// to its handler, the same shape in pbs_server and pbs_mom. C is what the
// daemon hands every handler (who sent it, the connection, the frame).
type Routes[C any] map[MsgType]Handler[C]

// Handler serves one request: its body as received, its reply body (nil
// for none) or the refusal.
type Handler[C any] func(c C, body msgpack.RawMessage) (any, error)

// Decoded makes a Handler of a function of the decoded request T; a body
// that does not decode is PBSE_PROTOCOL.
func Decoded[C, T any](fn func(c C, req *T) (any, error)) Handler[C] {
	return func(c C, body msgpack.RawMessage) (any, error) {
		req, err := DecodeRequest[T](body)
		if err != nil {
			return nil, err
		}
		return fn(c, req)
	}
}

// DecodeRequest decodes a request body into a T; a body that does not
// decode is PBSE_PROTOCOL.
func DecodeRequest[T any](body msgpack.RawMessage) (*T, error) {
	var req T
	if err := DecodeBody(body, &req); err != nil {
		return nil, Errorf(PBSE_PROTOCOL, "%v", err)
	}
	return &req, nil
}

// Serve calls the handler of request type t; a type with none is
// PBSE_UNKREQ.
func (r Routes[C]) Serve(t MsgType, c C, body msgpack.RawMessage) (any, error) {
	h, ok := r[t]
	if !ok {
		return nil, Errorf(PBSE_UNKREQ, "%s", t)
	}
	return h(c, body)
}
