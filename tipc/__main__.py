from tipc.cli import console_main

console_main()
