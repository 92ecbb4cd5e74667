package formula

import "math"

// Eval computes the formula with vals, the values of Vars in their order
// (missing ones count as 0). A step whose result is not a finite number
// makes the whole value 0: OpenPBS gives 0 to a job whose formula raises
// an error.
func (e *Expr) Eval(vals []float64) float64 {
	x, ok := e.root.eval(vals)
	if !ok {
		return 0
	}
	return x
}

func (n *node) eval(vals []float64) (float64, bool) {
	var x float64
	switch n.op {
	case opNum:
		x = n.num
	case opVar:
		if n.v < len(vals) {
			x = vals[n.v]
		}
	case opNeg:
		a, ok := n.args[0].eval(vals)
		if !ok {
			return 0, false
		}
		x = -a
	case opCall:
		args := make([]float64, len(n.args))
		for i, a := range n.args {
			v, ok := a.eval(vals)
			if !ok {
				return 0, false
			}
			args[i] = v
		}
		x = functions[n.fn].fn(args)
	default:
		a, ok := n.args[0].eval(vals)
		if !ok {
			return 0, false
		}
		b, ok := n.args[1].eval(vals)
		if !ok {
			return 0, false
		}
		x = binary(n.op, a, b)
	}
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}

func binary(o op, a, b float64) float64 {
	switch o {
	case opAdd:
		return a + b
	case opSub:
		return a - b
	case opMul:
		return a * b
	case opDiv:
		return a / b
	case opFloorDiv:
		return math.Floor(a / b)
	case opMod:
		// Python's modulo takes the divisor's sign.
		if b == 0 {
			return math.NaN()
		}
		return a - b*math.Floor(a/b)
	case opPow:
		return math.Pow(a, b)
	}
	return math.NaN()
}
