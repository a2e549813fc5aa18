from graphcert.cli import main

main()
