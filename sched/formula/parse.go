package formula

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits on what Parse reads, so that a broken or hostile line costs
// little to refuse: OpenPBS's own formulas are a line or two.
const (
	MaxLen   = 4096 // characters
	maxDepth = 64   // nested parentheses, calls and unary signs
)

// Error is a formula Parse refused: where, and why.
type Error struct {
	Col int    // 1-based column in the text given to Parse
	Msg string // what is wrong there
	// Name is the unknown name when that is the problem (for a caller
	// that suggests the closest known one), else "".
	Name string
}

func (e *Error) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Expr is a parsed formula.
type Expr struct {
	src  string
	root *node
	vars []Var
}

// String is the formula as written (without surrounding blanks).
func (e *Expr) String() string { return e.src }

// Vars lists the formula's inputs, each once, in order of first use:
// Eval takes their values in this order.
func (e *Expr) Vars() []Var { return append([]Var(nil), e.vars...) }

// Uses reports whether the formula reads a term.
func (e *Expr) Uses(t Term) bool {
	for _, v := range e.vars {
		if v.Term == t {
			return true
		}
	}
	return false
}

// UsesFairshare reports whether the formula reads the fair-share standing.
func (e *Expr) UsesFairshare() bool {
	for _, v := range e.vars {
		if v.Term.Fairshare() {
			return true
		}
	}
	return false
}

type op uint8

const (
	opNum op = iota
	opVar
	opNeg
	opAdd
	opSub
	opMul
	opDiv
	opFloorDiv
	opMod
	opPow
	opCall
)

// node is one operation of the tree. It holds no functions, so that two
// parses of one text compare equal (reflect.DeepEqual).
type node struct {
	op   op
	num  float64 // opNum
	v    int     // opVar: index in Expr.vars
	fn   string  // opCall
	args []*node // operands, or a call's arguments
}

// Parse reads a formula.
func Parse(text string) (*Expr, error) {
	if len(text) > MaxLen {
		return nil, &Error{Col: MaxLen + 1, Msg: fmt.Sprintf("the formula is longer than %d characters", MaxLen)}
	}
	p := &parser{s: text, e: &Expr{src: strings.TrimSpace(text)}}
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tEnd {
		return nil, &Error{Col: 1, Msg: "empty formula"}
	}
	root, err := p.sum(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEnd {
		return nil, p.unexpected()
	}
	p.e.root = root
	return p.e, nil
}

type tokKind uint8

const (
	tEnd tokKind = iota
	tNum
	tName
	tOp // + - * / // % ** ( ) ,
)

type token struct {
	kind tokKind
	text string
	num  float64
	col  int
}

type parser struct {
	s   string
	pos int
	tok token
	e   *Expr
}

func (p *parser) errAt(col int, format string, args ...any) error {
	return &Error{Col: col, Msg: fmt.Sprintf(format, args...)}
}

// pythonKeywords are refused by name: they begin the parts of Python a
// sort formula does not need.
var pythonKeywords = map[string]string{
	"if": "conditional expressions (x if c else y) are not supported", "else": "conditional expressions (x if c else y) are not supported",
	"and": "boolean operators are not supported", "or": "boolean operators are not supported", "not": "boolean operators are not supported",
	"lambda": "lambda is not supported", "in": "comparisons are not supported", "is": "comparisons are not supported",
	"True": "booleans are not supported", "False": "booleans are not supported", "None": "None is not a number",
}

// next reads the next token into p.tok.
func (p *parser) next() error {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
	start := p.pos
	col := start + 1
	if start == len(p.s) {
		p.tok = token{kind: tEnd, col: col}
		return nil
	}
	c := p.s[start]
	switch {
	case isDigit(c) || c == '.' && start+1 < len(p.s) && isDigit(p.s[start+1]):
		return p.number(start)
	case isLetter(c):
		i := start + 1
		for i < len(p.s) && (isLetter(p.s[i]) || isDigit(p.s[i])) {
			i++
		}
		p.pos = i
		p.tok = token{kind: tName, text: p.s[start:i], col: col}
		return nil
	}
	two := ""
	if start+1 < len(p.s) {
		two = p.s[start : start+2]
	}
	switch {
	case two == "**" || two == "//":
		p.pos += 2
		p.tok = token{kind: tOp, text: two, col: col}
		return nil
	case strings.IndexByte("+-*/%(),", c) >= 0:
		p.pos++
		p.tok = token{kind: tOp, text: string(c), col: col}
		return nil
	case strings.IndexByte("<>=!", c) >= 0:
		return p.errAt(col, "comparisons are not supported")
	case c == '"' || c == '\'':
		return p.errAt(col, "strings are not supported")
	case c < ' ' || c > '~':
		return p.errAt(col, "unexpected character %q", rune(c))
	}
	return p.errAt(col, "unexpected %q", string(c))
}

// number reads a decimal literal: digits, an optional fraction and an
// optional exponent, as Python writes floats.
func (p *parser) number(start int) error {
	i := start
	digits := func() {
		for i < len(p.s) && isDigit(p.s[i]) {
			i++
		}
	}
	digits()
	if i < len(p.s) && p.s[i] == '.' {
		i++
		digits()
	}
	if i < len(p.s) && (p.s[i] == 'e' || p.s[i] == 'E') {
		j := i + 1
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		if j < len(p.s) && isDigit(p.s[j]) {
			i = j
			digits()
		} else {
			return p.errAt(start+1, "malformed number %q", p.s[start:min(j+1, len(p.s))])
		}
	}
	if i < len(p.s) && (isLetter(p.s[i]) || isDigit(p.s[i]) || p.s[i] == '.') {
		return p.errAt(start+1, "malformed number %q", p.s[start:i+1])
	}
	// A literal too large for a float reads as an infinity (as in
	// Python), which Eval then treats as no value.
	v, err := strconv.ParseFloat(p.s[start:i], 64)
	if err != nil && !isRange(err) {
		return p.errAt(start+1, "malformed number %q", p.s[start:i])
	}
	p.pos = i
	p.tok = token{kind: tNum, text: p.s[start:i], num: v, col: start + 1}
	return nil
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

func (p *parser) is(text string) bool { return p.tok.kind == tOp && p.tok.text == text }

func (p *parser) unexpected() error {
	switch p.tok.kind {
	case tEnd:
		return p.errAt(p.tok.col, "the formula ends too early")
	case tNum, tName:
		if why, ok := pythonKeywords[p.tok.text]; ok && p.tok.kind == tName {
			return p.errAt(p.tok.col, "%s", why)
		}
		return p.errAt(p.tok.col, "missing operator before %q", p.tok.text)
	}
	return p.errAt(p.tok.col, "unexpected %q", p.tok.text)
}

// descend moves past the token that opens a nested part (a sign, **, a
// parenthesis), refusing to go deeper than maxDepth.
func (p *parser) descend(depth int) error {
	if depth >= maxDepth {
		return p.errAt(p.tok.col, "nested more than %d deep", maxDepth)
	}
	return p.next()
}

// The operators of the two left-associative levels.
var (
	sumOps     = map[string]op{"+": opAdd, "-": opSub}
	productOps = map[string]op{"*": opMul, "/": opDiv, "//": opFloorDiv, "%": opMod}
)

// sum: product (("+" | "-") product)*
func (p *parser) sum(depth int) (*node, error) { return p.leftAssoc(depth, sumOps, p.product) }

// product: unary (("*" | "/" | "//" | "%") unary)*
func (p *parser) product(depth int) (*node, error) { return p.leftAssoc(depth, productOps, p.unary) }

// leftAssoc reads operand (operator operand)* for the operators of ops,
// grouping to the left: 10 - 4 - 3 is (10 - 4) - 3.
func (p *parser) leftAssoc(depth int, ops map[string]op, operand func(int) (*node, error)) (*node, error) {
	left, err := operand(depth)
	for err == nil && p.tok.kind == tOp {
		o, ok := ops[p.tok.text]
		if !ok {
			break
		}
		if err = p.next(); err != nil {
			break
		}
		var right *node
		if right, err = operand(depth); err == nil {
			left = &node{op: o, args: []*node{left, right}}
		}
	}
	return left, err
}

// unary: ("+" | "-") unary | power
func (p *parser) unary(depth int) (*node, error) {
	if !p.is("+") && !p.is("-") {
		return p.power(depth)
	}
	neg := p.tok.text == "-"
	if err := p.descend(depth); err != nil {
		return nil, err
	}
	x, err := p.unary(depth + 1)
	if err != nil || !neg {
		return x, err
	}
	return &node{op: opNeg, args: []*node{x}}, nil
}

// power: primary ["**" unary]; the exponent may carry a sign and is
// itself a power, so ** groups to the right.
func (p *parser) power(depth int) (*node, error) {
	base, err := p.primary(depth)
	if err != nil || !p.is("**") {
		return base, err
	}
	if err := p.descend(depth); err != nil {
		return nil, err
	}
	exp, err := p.unary(depth + 1)
	if err != nil {
		return nil, err
	}
	return &node{op: opPow, args: []*node{base, exp}}, nil
}

// primary: number | name | name "(" arguments ")" | "(" sum ")"
func (p *parser) primary(depth int) (*node, error) {
	t := p.tok
	switch {
	case t.kind == tNum:
		return &node{op: opNum, num: t.num}, p.next()
	case t.kind == tName:
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.is("(") {
			return p.call(t, depth)
		}
		return p.name(t)
	case p.is("("):
		if err := p.descend(depth); err != nil {
			return nil, err
		}
		x, err := p.sum(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.is(")") {
			if p.tok.kind == tEnd {
				return nil, p.errAt(t.col, "unclosed parenthesis")
			}
			return nil, p.unexpected()
		}
		return x, p.next()
	}
	return nil, p.unexpected()
}

// name resolves a name that is not called: a constant or a variable.
func (p *parser) name(t token) (*node, error) {
	if why, ok := pythonKeywords[t.text]; ok {
		return nil, p.errAt(t.col, "%s", why)
	}
	if c, ok := constants[t.text]; ok {
		return &node{op: opNum, num: c}, nil
	}
	if _, ok := functions[t.text]; ok {
		return nil, p.errAt(t.col, "%s is a function: write %s(...)", t.text, t.text)
	}
	v, why, unknown := resolve(t.text)
	if why != "" {
		e := &Error{Col: t.col, Msg: why}
		if unknown {
			e.Name = t.text
		}
		return nil, e
	}
	for i, known := range p.e.vars {
		if known == v {
			return &node{op: opVar, v: i}, nil
		}
	}
	p.e.vars = append(p.e.vars, v)
	return &node{op: opVar, v: len(p.e.vars) - 1}, nil
}

// call reads a function's arguments; p.tok is the opening parenthesis.
func (p *parser) call(t token, depth int) (*node, error) {
	f, ok := functions[t.text]
	if !ok {
		if _, isKeyword := pythonKeywords[t.text]; isKeyword {
			return nil, p.errAt(t.col, "%s", pythonKeywords[t.text])
		}
		if _, _, unknown := resolve(t.text); !unknown {
			return nil, p.errAt(t.col, "%s is not a function", t.text)
		}
		return nil, &Error{Col: t.col, Msg: "unknown function " + quoteName(t.text), Name: t.text}
	}
	n := &node{op: opCall, fn: t.text}
	if err := p.descend(depth); err != nil {
		return nil, err
	}
	for !p.is(")") {
		if len(n.args) > 0 {
			if !p.is(",") {
				if p.tok.kind == tEnd {
					return nil, p.errAt(t.col, "unclosed parenthesis of %s(", t.text)
				}
				return nil, p.unexpected()
			}
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		a, err := p.sum(depth + 1)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, a)
	}
	if len(n.args) < f.min || f.max >= 0 && len(n.args) > f.max {
		return nil, p.errAt(t.col, "%s takes %s, not %d", t.text, arity(f), len(n.args))
	}
	return n, p.next()
}

func arity(f function) string {
	switch {
	case f.max < 0:
		return fmt.Sprintf("%d or more arguments", f.min)
	case f.min == f.max && f.min == 1:
		return "one argument"
	case f.min == f.max:
		return fmt.Sprintf("%d arguments", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

func quoteName(s string) string { return strconv.Quote(s) }
