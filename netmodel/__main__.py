from netmodel.cli import main

main()
