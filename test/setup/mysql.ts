import 'reflect-metadata';
import { mysqlTestServer } from '../helpers/mysql-test-url';
process.env.TEST_DB = 'mysql';
// A MYSQL_TEST_URL that cannot name test databases fails here, before any test makes one.
mysqlTestServer('t');
