from netmodel.cli.entry import run

run()
