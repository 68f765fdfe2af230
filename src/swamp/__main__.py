from swamp.cli.main import main

main()
