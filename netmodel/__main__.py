from netmodel.cli.main import main

main()
