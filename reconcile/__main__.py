from reconcile.cli.main import main

main()
