package main

import "github.com/gopbs/gopbs/internal/jobcmd"

func main() { jobcmd.Signal.Main() }
