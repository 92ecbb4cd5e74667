package main

import "gopbs/internal/jobcmd"

func main() { jobcmd.Release.Main() }
