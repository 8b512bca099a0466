"""One invocation end to end, as the command line asks for it: the run (`app`: outputs checked,
the cluster picked, the run within its budget and signals, the reports, the exit code),
`reconcile diff` (`diff`) and `reconcile status` (`status`), and what only they use: report
files (`outputs`), the process's signals and privacy (`process`), inputs read from git
(`git_inputs`), `--local`'s in-process cluster (`local`) and output directory (`output_dir`),
the run record (`run_record`), metrics (`metrics`), the progress bar (`progressbar`) and the
summary logged (`summary`)."""
