package main

import "gopbs/internal/jobcmd"

func main() { jobcmd.Run.Main() }
