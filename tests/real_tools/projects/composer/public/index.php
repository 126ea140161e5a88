<?php
header('Content-Type: text/plain');
echo "hello from php -S\n";
