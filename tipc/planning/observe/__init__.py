"""Plans observed from the repo's own script: the pure half (the effectful half, which runs the script in
the sandbox, is tipc.execute.observation).

    prepare.prepare(config, mode, *, repo, overrides, script, dialect, tools) -> Prepared   what to run, how
    standins.stand_ins(tools, record, names, python) -> {path: (text, mode)}     the recording stand-ins
    interpret.interpret(prepared, ran) -> Observation                            what it ran, as a plan
    crosscheck.cross_check(profile, observed) -> list[Finding]
    choose.plan_from(profile, obs, ...) -> Plan                  what `tipc run` / `tipc check` execute

The observation runs `bash test_tipc/test_train_inference_python.sh CONFIG MODE` in a copy-on-write view of
the repo (these scripts `sed -i`, `mkdir` and append logs), inside the sandbox, with recording stand-ins first
on PATH for every interpreter name the script may call, an instant `sleep`, and inert stand-ins for tools that
must not run (`nvidia-smi`, `wget`, `pip`, `git`...). Each stand-in call appends its argv, working directory,
environment and the files its stdout/stderr point at as one JSON line; the script's status lines give the
command text it logs. Everything read back is data a hostile script may have forged: it only ever becomes a
plan that runs in the same sandbox. The profiles (tipc.planning.planner) stay the fast path and the
explanation of which slot feeds which flag; the observation is the truth about an edited or unknown script.

Modules, each importing only those listed before it: `standins`, `prepare`, `trace` (what the script did,
read back), `stages` (what a command is), `builder` (the calls matched against the config, as steps),
`identity` (which script the repo has), `interpret`, `crosscheck`, `choose`.
"""
