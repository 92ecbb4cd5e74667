package main

import "github.com/gopbs/gopbs/internal/cli/qorder"

func main() { qorder.Main() }
