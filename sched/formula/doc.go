// Package formula is the job sort formula of OpenPBS (job_sort_formula):
// an arithmetic expression over a job's terms whose value orders the
// queued jobs, highest first.
//
// # The language
//
// OpenPBS evaluates the formula as a Python expression with the math
// module imported. This package reads the part of that language a sort
// formula needs, and refuses the rest by name rather than guessing:
//
//   - numbers: 3, 0.5, .5, 1e6, 2.5E-3;
//   - terms (Terms): eligible_time, queue_priority, job_priority,
//     fairshare_perc (fair_share_perc, its old spelling),
//     fairshare_tree_usage, fairshare_factor, accrue_type, and every
//     numeric built-in resource of the job's Resource_List (ncpus, mem,
//     walltime, ...);
//   - the math module's constants pi and e;
//   - + - * / // % and ** with Python's precedence and associativity
//     (** binds tighter than a unary minus on its left and is
//     right-associative: -2**2 is -4, 2**3**2 is 512), and parentheses;
//   - the functions abs, fabs, ceil, floor, sqrt, exp, log (one or two
//     arguments), log2, log10, pow, min and max (two or more arguments).
//
// Comparisons, conditional expressions (x if c else y), strings and every
// other name are refused with the column where they start.
//
// # Values
//
// A resource the job did not request counts as 0, as in OpenPBS. Sizes
// count in kilobytes and times in seconds (OpenPBS's units). A formula
// whose value is not a finite number for a job (a division by zero, the
// logarithm of 0, an overflow) gives that job 0, which is what OpenPBS
// does when the evaluation raises an error.
//
// The package is pure: a parsed Expr is a value the sched_priv parser
// builds once and policies evaluate with the numbers they look up.
package formula
